// Signature base string vectors: RFC 5849 §3.4.1 and §3.4.1.2, the oauth.net wiki
// TestCases (§9.1.1, §9.1.2), Twitter's "Creating a signature" and the golden
// 127.0.0.1:8765 vector that five independent client libraries sign alike.
import { describe, expect, it } from 'vitest'
import { baseStringUri, signatureBaseString } from '../../../../src/gateway/auth/oauth/base-string.js'
import { collectOAuthParameters } from '../../../../src/gateway/auth/oauth/parameters.js'
import type { AuthRequest } from '../../../../src/gateway/domain/auth.js'
import { authRequest, form, twitterExampleRequest } from '../fixtures.js'

function baseStringOf(req: AuthRequest): string {
  const collected = collectOAuthParameters(req)
  if (!collected.ok) throw new Error(collected.message)
  return signatureBaseString(req.method, baseStringUri(req.scheme, req.host, req.url), collected.params.signed)
}

/** The normalized parameters (§3.4.1.3.2) as the base string holds them: its third part, encoded once more. */
function normalizedOf(req: AuthRequest): string {
  return decodeURIComponent(baseStringOf(req).split('&')[2]!)
}

describe('RFC 5849 §3.4.1 example (example.com)', () => {
  const req = authRequest({
    method: 'POST',
    url: '/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b',
    host: 'example.com',
    contentType: form,
    body: 'c2&a3=2+q',
    headers: {
      // The RFC folds the header over several lines; on the wire it is one line.
      authorization:
        'OAuth realm="Example",    oauth_consumer_key="9djdj82h48djs9d2",    oauth_token="kkk9d7dh3k39sjv7",' +
        '    oauth_signature_method="HMAC-SHA1",    oauth_timestamp="137131201",    oauth_nonce="7d8f3e4a",' +
        '    oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D"',
    },
  })

  it('normalizes the parameters (§3.4.1.3.2), sorting a3=2%20q before a3=a', () => {
    expect(normalizedOf(req)).toBe(
      'a2=r%20b&a3=2%20q&a3=a&b5=%3D%253D&c%40=&c2=&oauth_consumer_key=9djdj82h48djs9d2&oauth_nonce=7d8f3e4a&oauth_signature_method=HMAC-SHA1&oauth_timestamp=137131201&oauth_token=kkk9d7dh3k39sjv7',
    )
  })

  it('builds the base string (§3.4.1.1)', () => {
    expect(baseStringOf(req)).toBe(
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
    )
  })
})

describe('base string URI (§3.4.1.2)', () => {
  it('lower-cases the host, drops the default port, keeps the path as received and drops the query', () => {
    expect(baseStringUri('http', 'EXAMPLE.COM:80', '/r%20v/X?id=123')).toBe('http://example.com/r%20v/X')
  })
  it('keeps a port that is not the default', () => {
    expect(baseStringUri('https', 'www.example.net:8080', '/?q=1')).toBe('https://www.example.net:8080/')
  })
  it('drops 443 for https but not for http', () => {
    expect(baseStringUri('https', 'example.com:443', '/a')).toBe('https://example.com/a')
    expect(baseStringUri('http', 'example.com:443', '/a')).toBe('http://example.com:443/a')
  })
  it('takes the path from an absolute-form request target and makes an empty path "/"', () => {
    expect(baseStringUri('http', 'example.com', 'http://example.com')).toBe('http://example.com/')
    expect(baseStringUri('http', 'example.com', 'http://example.com/p?x=1')).toBe('http://example.com/p')
  })
})

describe('oauth.net TestCases: normalize request parameters (§9.1.1)', () => {
  it.each([
    ['name', 'name='],
    ['a=b', 'a=b'],
    ['a=b&c=d', 'a=b&c=d'],
    ['a=x!y&a=x+y', 'a=x%20y&a=x%21y'],
    ['x!y=a&x=a', 'x=a&x%21y=a'],
  ])('%s -> %s', (query, normalized) => {
    expect(normalizedOf(authRequest({ url: `/?${query}` }))).toBe(normalized)
  })
})

describe('oauth.net TestCases: concatenate request elements (§9.1.2)', () => {
  it.each([
    ['GET', 'http', 'example.com', '/?n=v', 'GET&http%3A%2F%2Fexample.com%2F&n%3Dv'],
    ['GET', 'http', 'example.com', 'http://example.com?n=v', 'GET&http%3A%2F%2Fexample.com%2F&n%3Dv'],
    [
      'POST',
      'https',
      'photos.example.net',
      '/request_token?oauth_version=1.0&oauth_consumer_key=dpf43f3p2l4k3l03&oauth_timestamp=1191242090&oauth_nonce=hsu94j3884jdopsl&oauth_signature_method=PLAINTEXT&oauth_signature=ignored',
      'POST&https%3A%2F%2Fphotos.example.net%2Frequest_token&oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3Dhsu94j3884jdopsl%26oauth_signature_method%3DPLAINTEXT%26oauth_timestamp%3D1191242090%26oauth_version%3D1.0',
    ],
    [
      'GET',
      'http',
      'photos.example.net',
      '/photos?file=vacation.jpg&size=original&oauth_version=1.0&oauth_consumer_key=dpf43f3p2l4k3l03&oauth_token=nnch734d00sl2jdk&oauth_timestamp=1191242096&oauth_nonce=kllo9940pd9333jh&oauth_signature=ignored&oauth_signature_method=HMAC-SHA1',
      'GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3Dkllo9940pd9333jh%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1191242096%26oauth_token%3Dnnch734d00sl2jdk%26oauth_version%3D1.0%26size%3Doriginal',
    ],
  ] as const)('%s %s://%s%s', (method, scheme, host, url, expected) => {
    expect(baseStringOf(authRequest({ method, scheme, host, url }))).toBe(expected)
  })
})

const twitterOAuth =
  'OAuth oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", ' +
  'oauth_signature="x", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1318622958", ' +
  'oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", oauth_version="1.0"'

describe('Twitter "Creating a signature"', () => {
  const req = authRequest({
    ...twitterExampleRequest,
    headers: { authorization: twitterOAuth },
  })
  it('builds the parameter string', () => {
    expect(normalizedOf(req)).toBe(
      'include_entities=true&oauth_consumer_key=xvz1evFS4wEEPTGEFPHBog&oauth_nonce=kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg&oauth_signature_method=HMAC-SHA1&oauth_timestamp=1318622958&oauth_token=370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb&oauth_version=1.0&status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21',
    )
  })
  it('builds the base string', () => {
    expect(baseStringOf(req)).toBe(
      'POST&https%3A%2F%2Fapi.twitter.com%2F1.1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521',
    )
  })
})

describe('golden vector for kigo\'s route (127.0.0.1:8765)', () => {
  it('builds the base string Net::OAuth printed', () => {
    const req = authRequest({
      method: 'POST',
      host: '127.0.0.1:8765',
      url: '/api/statuses/update.json',
      contentType: form,
      body: 'keyword=test+kw&status=Hello+Ladies+%2B+Gentlemen%2C+a+signed+OAuth+request%21',
      headers: { authorization: twitterOAuth },
    })
    expect(baseStringOf(req)).toBe(
      'POST&http%3A%2F%2F127.0.0.1%3A8765%2Fapi%2Fstatuses%2Fupdate.json&keyword%3Dtest%2520kw%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521',
    )
  })
})
