// The benchmark's own signing must produce what a real client sends: checked against
// published vectors (RFC 5849, the xml.com and XML::Atom WSSE tokens) and against an independent OAuth library.
import { librarySignature } from '../helpers/oauth1a.js'
import { describe, expect, it } from 'vitest'
import { basicAuthorization, oauthAuthorization, signatureBaseString, wsseHeader } from '../../bench/signing.js'

const photos = { consumerKey: 'dpf43f3p2l4k3l03', consumerSecret: 'kd94hf93k423kf44', token: 'nnch734d00sl2jdk', tokenSecret: 'pfkkdhi9sl3r4s00' }

function headerParams(header: string): Record<string, string> {
  expect(header.startsWith('OAuth ')).toBe(true)
  return Object.fromEntries([...header.slice(6).matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1]!, decodeURIComponent(m[2]!)]))
}

describe('OAuth 1.0a HMAC-SHA1', () => {
  it('signs the oauth.net photos example to its published signature', () => {
    const header = oauthAuthorization(photos, {
      method: 'GET',
      baseUri: 'http://photos.example.net/photos',
      params: [['file', 'vacation.jpg'], ['size', 'original']],
      nonce: 'kllo9940pd9333jh',
      timestamp: 1191242096,
    })
    expect(headerParams(header).oauth_signature).toBe('tR3+Ty81lMeYAr/Fid0kMTYa/WM=')
    expect(header).toContain('oauth_signature="tR3%2BTy81lMeYAr%2FFid0kMTYa%2FWM%3D"')
  })

  it('builds the RFC 5849 §1.2 base string', () => {
    const base = signatureBaseString('get', 'http://photos.example.net/photos', [
      ['file', 'vacation.jpg'], ['size', 'original'], ['oauth_consumer_key', 'dpf43f3p2l4k3l03'], ['oauth_token', 'nnch734d00sl2jdk'],
      ['oauth_signature_method', 'HMAC-SHA1'], ['oauth_timestamp', '137131202'], ['oauth_nonce', 'chapoH'],
    ])
    expect(base).toBe('GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DchapoH%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131202%26oauth_token%3Dnnch734d00sl2jdk%26size%3Doriginal')
  })

  it('agrees with the oauth-1.0a library on a form-body POST, and uses a fresh nonce and time each time', () => {
    const creds = { consumerKey: 'ck', consumerSecret: "s3cret!*'()", token: 'tk', tokenSecret: 'tok en/secret' }
    const url = 'http://localhost:8080/api/statuses/update.json'
    const params: Array<[string, string]> = [['keyword', 'bench'], ['status', 'héllo = wörld + 100%']]
    const first = headerParams(oauthAuthorization(creds, { method: 'POST', baseUri: url, params }))
    const second = headerParams(oauthAuthorization(creds, { method: 'POST', baseUri: url, params }))
    expect(first.oauth_nonce).not.toBe(second.oauth_nonce)
    expect(Math.abs(Number(first.oauth_timestamp) - Date.now() / 1000)).toBeLessThan(5)

    const expected = librarySignature(creds, { url, method: 'POST', data: Object.fromEntries(params) }, { nonce: first.oauth_nonce!, timestamp: first.oauth_timestamp! })
    expect(first.oauth_signature).toBe(expected)
  })
})

describe('WSSE UsernameToken', () => {
  it('matches XML::Atom::Client output for pinned nonce bytes (vector W4)', () => {
    const header = wsseHeader('bob', 'taadtaadpstcsm', { nonce: Buffer.from('0123456789abcdef0123456789abcdef01234567', 'hex'), created: '2003-12-15T14:43:07Z' })
    expect(header).toBe('UsernameToken Username="bob", PasswordDigest="cYRchtqiVwtAdL8swh0GULl4od8=", Nonce="ASNFZ4mrze8BI0VniavN7wEjRWc=", Created="2003-12-15T14:43:07Z"')
  })

  it('reproduces the xml.com token in the Base64 nonce convention (vector W2, as the npm wsse README gives it)', () => {
    const header = wsseHeader('bob', 'taadtaadpstcsm', { nonce: Buffer.from('d36e316282959a9ed4c89851497a717f'), created: '2003-12-15T14:43:07Z' })
    expect(header).toContain('PasswordDigest="quR/EWLAV4xLf9Zqyw4pDmfV9OY="')
    expect(header).toContain('Nonce="ZDM2ZTMxNjI4Mjk1OWE5ZWQ0Yzg5ODUxNDk3YTcxN2Y="')
  })

  it('uses a fresh nonce and the current time by default', () => {
    const a = wsseHeader('bob', 'pw')
    const b = wsseHeader('bob', 'pw')
    const nonce = (h: string) => /Nonce="([^"]+)"/.exec(h)![1]
    expect(nonce(a)).not.toBe(nonce(b))
    const created = Date.parse(/Created="([^"]+)"/.exec(a)![1]!)
    expect(Math.abs(created - Date.now())).toBeLessThan(5000)
  })
})

describe('Basic', () => {
  it('encodes id:password as UTF-8 Base64 (RFC 7617)', () => {
    expect(basicAuthorization('Aladdin', 'open sesame')).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==')
    expect(basicAuthorization('test', '123£')).toBe('Basic dGVzdDoxMjPCow==')
  })
})
