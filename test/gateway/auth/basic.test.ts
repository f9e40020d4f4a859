// HTTP Basic (RFC 7617, docs/gateway.md#http-basic).
import { describe, expect, it } from 'vitest'
import { readBasic, verifyBasicCredential } from '../../../src/gateway/auth/basic.js'
import type { AuthRequest, AuthResult, CredentialLookup } from '../../../src/gateway/domain/auth.js'
import { authRequest, memoryLookup } from './fixtures.js'

/** The gateway's Basic pipeline (src/gateway/authenticate.ts): read the credential, then verify it. */
async function verifyBasic(req: AuthRequest, lookup: CredentialLookup): Promise<AuthResult> {
  const credential = readBasic(req)
  return 'kind' in credential ? credential : verifyBasicCredential(credential, lookup)
}

const lookup = memoryLookup({
  users: [
    { id: 'alice', name: 'Alice', apiPassword: 'k3y:with:colons' },
    { id: 'bob_2', name: 'Bob', apiPassword: 'pässwörd' },
  ],
})
const basic = (credentials: string | Buffer) =>
  authRequest({ headers: { authorization: 'Basic ' + Buffer.from(credentials).toString('base64') } })

describe('verifyBasic', () => {
  it('accepts the API password, which may contain colons', async () => {
    expect(await verifyBasic(basic('alice:k3y:with:colons'), lookup)).toEqual({
      kind: 'ok',
      principal: { userId: 'alice', userName: 'Alice', method: 'basic', consumerKey: '', scopes: [] },
    })
  })

  it('decodes the credentials as UTF-8 (RFC 7617 charset="UTF-8")', async () => {
    expect((await verifyBasic(basic('bob_2:pässwörd'), lookup)).kind).toBe('ok')
    // The same password in Latin-1 is a different password.
    expect((await verifyBasic(basic(Buffer.from('bob_2:pässwörd', 'latin1')), lookup)).kind).toBe('fail')
  })

  it('accepts a lower-case scheme and unpadded Base64', async () => {
    const token = Buffer.from('alice:k3y:with:colons').toString('base64').replace(/=+$/, '')
    expect((await verifyBasic(authRequest({ headers: { authorization: `basic ${token}` } }), lookup)).kind).toBe('ok')
  })

  it('refuses a wrong password (401 bad_credentials, naming the user for throttling)', async () => {
    expect(await verifyBasic(basic('alice:k3y'), lookup)).toMatchObject({
      kind: 'fail',
      method: 'basic',
      status: 401,
      code: 'bad_credentials',
      outcome: 'bad_credentials',
      attemptedUser: 'alice',
    })
  })

  it('refuses an unknown user with the same answer, after looking it up', async () => {
    const before = lookup.calls.length
    const result = await verifyBasic(basic('mallory:k3y:with:colons'), lookup)
    expect(result).toMatchObject({ status: 401, code: 'bad_credentials', attemptedUser: 'mallory' })
    expect(lookup.calls.slice(before)).toEqual(['apiPassword:mallory'])
  })

  it('refuses a user id that cannot exist without looking it up', async () => {
    const before = lookup.calls.length
    expect(await verifyBasic(basic('../x:pw'), lookup)).toMatchObject({ status: 401, code: 'bad_credentials' })
    expect(lookup.calls.length).toBe(before)
  })

  it.each([
    ['not Base64', 'Basic !!!!'],
    ['no colon', 'Basic ' + Buffer.from('alice').toString('base64')],
    ['not UTF-8', 'Basic ' + Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')],
    ['empty', 'Basic '],
    ['too much padding', 'Basic YQ==='],
  ])('answers a malformed credential (%s) with 401 malformed_credentials', async (_what, authorization) => {
    expect(await verifyBasic(authRequest({ headers: { authorization } }), lookup)).toMatchObject({
      kind: 'fail',
      status: 401,
      code: 'malformed_credentials',
      outcome: 'malformed',
    })
  })
})
