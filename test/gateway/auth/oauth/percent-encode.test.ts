// oauth.net wiki TestCases, "Parameter Encoding" (OAuth Core 1.0 §5.1).
import { describe, expect, it } from 'vitest'
import { percentDecode, percentEncode } from '../../../../src/gateway/auth/oauth/percent-encode.js'

describe('percentEncode (RFC 5849 §3.6)', () => {
  it.each([
    ['abcABC123', 'abcABC123'],
    ['-._~', '-._~'],
    ['%', '%25'],
    ['+', '%2B'],
    ['&=*', '%26%3D%2A'],
    ['\n', '%0A'],
    [' ', '%20'],
    ['\u007f', '%7F'],
    ['\u0080', '%C2%80'],
    ['\u3001', '%E3%80%81'],
  ])('encodes %j as %s', (input, encoded) => {
    expect(percentEncode(input)).toBe(encoded)
  })

  it("escapes the characters encodeURIComponent leaves alone (!*'())", () => {
    expect(percentEncode("!*'()")).toBe('%21%2A%27%28%29')
  })

  it('encodes characters outside the BMP as their four UTF-8 octets', () => {
    expect(percentEncode('a😀b')).toBe('a%F0%9F%98%80b')
  })

  it('agrees with UTF-8 encoding for a mixed string', () => {
    const s = 'Hello Ladies + Gentlemen, a signed OAuth request! 日本語 ~x'
    const expected = [...Buffer.from(s, 'utf8')]
      .map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0')))
      .join('')
    expect(percentEncode(s)).toBe(expected)
  })
})

describe('percentDecode', () => {
  it('treats + as a space only in form encoding', () => {
    expect(percentDecode('2+q', true)).toBe('2 q')
    expect(percentDecode('2+q', false)).toBe('2+q')
  })
  it('decodes UTF-8 escapes, upper or lower case', () => {
    expect(percentDecode('%E6%97%A5%e6%9c%ac', true)).toBe('日本')
  })
  it('rejects malformed escapes and non-UTF-8 octets', () => {
    expect(percentDecode('%ZZ', true)).toBeNull()
    expect(percentDecode('%', false)).toBeNull()
    expect(percentDecode('%FF', true)).toBeNull()
  })
})
