import { expect, test } from 'vitest'
import { ApiError } from '../../../src/common/errors.js'
import { decodeForm, queryBytes } from '../../../src/core/routes/form-decoding.js'

const decode = (s: string | Buffer) => decodeForm(typeof s === 'string' ? Buffer.from(s, 'latin1') : s)

test('pairs in order, duplicates kept, + is a space, percent-decoded UTF-8', () => {
  expect(decode('a=1&b=x+y&a=%E5%AD%A3&empty=&flag&&')).toEqual([['a', '1'], ['b', 'x y'], ['a', '季'], ['empty', ''], ['flag', '']])
  expect(decode('k%3D=v%3D%26')).toEqual([['k=', 'v=&']])
})

test('raw UTF-8 bytes are accepted', () => {
  expect(decode(Buffer.from('s=季語', 'utf8'))).toEqual([['s', '季語']])
})

test('bad percent-encoding and invalid UTF-8 are 400', () => {
  for (const bad of ['a=%', 'a=%4', 'a=%zz', 'a=%E5%AD', 'a=%FF', 'a=%C0%AF', '%ED%A0%80=1']) {
    let err: unknown
    try {
      decode(bad)
    } catch (e) {
      err = e
    }
    expect(err, bad).toBeInstanceOf(ApiError)
    expect((err as ApiError).status).toBe(400)
    expect((err as ApiError).code).toBe('bad_encoding')
  }
})

test('the query of a request target', () => {
  expect(queryBytes('/p?a=1#frag').toString()).toBe('a=1')
  expect(queryBytes('/p').length).toBe(0)
})
