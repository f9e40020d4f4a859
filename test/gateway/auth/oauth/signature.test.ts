// Signature vectors (RFC 5849 §1.2 and §3.4.1.1 with its errata value, the oauth.net wiki
// TestCases, Twitter's "Creating a signature", a golden and a non-ASCII vector): each request goes through the whole verifier
// with its published secrets; a signature the vectors say is wrong must be refused.
import { describe, expect, it } from 'vitest'
import { baseStringUri, signatureBaseString } from '../../../../src/gateway/auth/oauth/base-string.js'
import { collectOAuthParameters } from '../../../../src/gateway/auth/oauth/parameters.js'
import { percentEncode } from '../../../../src/gateway/auth/oauth/percent-encode.js'
import { computeSignature, signingKey } from '../../../../src/gateway/auth/oauth/signature.js'
import { checkOAuthRequest, verifyOAuth, verifyOAuthSignature, type OAuthVerifyOptions } from '../../../../src/gateway/auth/oauth/verify.js'
import type { AuthRequest } from '../../../../src/gateway/domain/auth.js'
import { authRequest, form, MemoryReplayCache, memoryLookup, twitterExampleRequest } from '../fixtures.js'

const opts: OAuthVerifyOptions = { windowSeconds: 300, hmacSha256: true, plaintext: false }

function header(params: Record<string, string>, realm?: string): string {
  const parts = Object.entries(params).map(([k, v]) => `${k}="${percentEncode(v)}"`)
  return 'OAuth ' + (realm === undefined ? '' : `realm="${realm}", `) + parts.join(', ')
}

describe('RFC 5849 §3.4.1 example, with Errata 2550', () => {
  const lookup = memoryLookup({
    users: [{ id: 'example', apiPassword: 'unused' }],
    consumers: [{ key: '9djdj82h48djs9d2', secret: 'j49sk3j29djd' }],
    tokens: [{ token: 'kkk9d7dh3k39sjv7', secret: 'dh893hdasih9', consumerKey: '9djdj82h48djs9d2', userId: 'example' }],
  })
  const request = (signature: string): AuthRequest =>
    authRequest({
      method: 'POST',
      url: '/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b',
      host: 'example.com',
      contentType: form,
      body: 'c2&a3=2+q',
      now: 137131201_000,
      headers: {
        authorization:
          'OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7", ' +
          `oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a", oauth_signature="${signature}"`,
      },
    })

  it('accepts the errata signature r6/TJjbCOr97/+UU0NsvSne7s5g=', async () => {
    const result = await verifyOAuth(request(percentEncode('r6/TJjbCOr97/+UU0NsvSne7s5g=')), lookup, new MemoryReplayCache(), opts)
    expect(result).toMatchObject({ kind: 'ok', principal: { userId: 'example', consumerKey: '9djdj82h48djs9d2', method: 'oauth' } })
  })

  it('refuses the signature printed in the RFC (bYT5…), which does not verify', async () => {
    const result = await verifyOAuth(request('bYT5CMsGcbgUdFHObYMEfcx6bsw%3D'), lookup, new MemoryReplayCache(), opts)
    expect(result).toMatchObject({ kind: 'fail', status: 401, code: 'signature_invalid' })
  })
})

describe('RFC 5849 §1.2 (photos.example.net)', () => {
  const consumer = { key: 'dpf43f3p2l4k3l03', secret: 'kd94hf93k423kf44' }

  it('initiate: 74KNZJeDHnMBp0EMJ9ZHt/XKycU= with key kd94hf93k423kf44&', () => {
    const req = authRequest({
      method: 'POST',
      scheme: 'https',
      host: 'photos.example.net',
      url: '/initiate',
      now: 137131200_000,
      headers: {
        authorization:
          'OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131200", ' +
          'oauth_nonce="wIjqoS", oauth_callback="http%3A%2F%2Fprinter.example.com%2Fready", oauth_signature="74KNZJeDHnMBp0EMJ9ZHt%2FXKycU%3D"',
      },
    })
    const checked = checkOAuthRequest(req, opts, ['oauth_consumer_key', 'oauth_signature', 'oauth_callback'])
    if (!checked.ok) throw new Error(checked.result.message)
    expect(signatureBaseString(req.method, baseStringUri(req.scheme, req.host, req.url), checked.request.params.signed)).toBe(
      'POST&https%3A%2F%2Fphotos.example.net%2Finitiate&oauth_callback%3Dhttp%253A%252F%252Fprinter.example.com%252Fready%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DwIjqoS%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131200',
    )
    expect(verifyOAuthSignature(req, checked.request.params, consumer.secret, '')).toBe(true)
    expect(verifyOAuthSignature(req, checked.request.params, consumer.secret, 'x')).toBe(false)
  })

  it('token: gKgrFCywp7rO0OXSjdot/IHF7IU= with the temporary secret hdhd0244k9j7ao03', () => {
    const req = authRequest({
      method: 'POST',
      scheme: 'https',
      host: 'photos.example.net',
      url: '/token',
      now: 137131201_000,
      headers: {
        authorization: header(
          {
            oauth_consumer_key: consumer.key,
            oauth_token: 'hh5s93j4hdidpola',
            oauth_signature_method: 'HMAC-SHA1',
            oauth_timestamp: '137131201',
            oauth_nonce: 'walatlh',
            oauth_verifier: 'hfdp7dh39dks9884',
            oauth_signature: 'gKgrFCywp7rO0OXSjdot/IHF7IU=',
          },
          'Photos',
        ),
      },
    })
    const checked = checkOAuthRequest(req, opts, ['oauth_consumer_key', 'oauth_token', 'oauth_verifier'])
    if (!checked.ok) throw new Error(checked.result.message)
    expect(verifyOAuthSignature(req, checked.request.params, consumer.secret, 'hdhd0244k9j7ao03')).toBe(true)
  })

  it('resource: MdpQcU8iPSUjWoN/UDMsK2sui9I= with the header as printed, through verifyOAuth', async () => {
    const lookup = memoryLookup({
      users: [{ id: 'jane', name: 'Jane', apiPassword: 'unused' }],
      consumers: [consumer],
      tokens: [{ token: 'nnch734d00sl2jdk', secret: 'pfkkdhi9sl3r4s00', consumerKey: consumer.key, userId: 'jane', scopes: ['read_private'] }],
    })
    const req = authRequest({
      method: 'GET',
      host: 'photos.example.net',
      url: '/photos?file=vacation.jpg&size=original',
      now: 137131202_000,
      headers: {
        authorization:
          'OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_token="nnch734d00sl2jdk", oauth_signature_method="HMAC-SHA1", ' +
          'oauth_timestamp="137131202", oauth_nonce="chapoH", oauth_signature="MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D"',
      },
    })
    const result = await verifyOAuth(req, lookup, new MemoryReplayCache(), opts)
    expect(result).toEqual({
      kind: 'ok',
      principal: { userId: 'jane', userName: 'Jane', method: 'oauth', consumerKey: consumer.key, scopes: ['read_private'] },
    })
  })
})

describe('PLAINTEXT values (RFC 5849 §2.1, §2.3; OAuth Core 1.0 §9.4.1)', () => {
  it.each([
    ['ja893SD9', '', 'ja893SD9%26'],
    ['ja893SD9', 'xyz4992k83j47x0b', 'ja893SD9%26xyz4992k83j47x0b'],
  ])('%s + %j is sent as %s', (cs, ts, sent) => {
    expect(percentEncode(computeSignature('PLAINTEXT', '', cs, ts))).toBe(sent)
  })
  it.each([
    ['djr9rjt0jd78jf88', 'jjd999tj88uiths3', 'djr9rjt0jd78jf88&jjd999tj88uiths3'],
    ['djr9rjt0jd78jf88', 'jjd99$tj88uiths3', 'djr9rjt0jd78jf88&jjd99%24tj88uiths3'],
    ['djr9rjt0jd78jf88', '', 'djr9rjt0jd78jf88&'],
  ])('%s + %s -> %s', (cs, ts, signature) => {
    expect(computeSignature('PLAINTEXT', 'ignored', cs, ts)).toBe(signature)
  })
})

describe('oauth.net TestCases: HMAC-SHA1 (§9.2)', () => {
  const photosBase =
    'GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3Dkllo9940pd9333jh%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1191242096%26oauth_token%3Dnnch734d00sl2jdk%26oauth_version%3D1.0%26size%3Doriginal'
  it.each([
    ['cs', '', 'cs&', 'bs', 'egQqG5AJep5sJ7anhXju1unge2I='],
    ['cs', 'ts', 'cs&ts', 'bs', 'VZVjXceV7JgPq/dOTnNmEfO0Fv8='],
    ['kd94hf93k423kf44', 'pfkkdhi9sl3r4s00', 'kd94hf93k423kf44&pfkkdhi9sl3r4s00', photosBase, 'tR3+Ty81lMeYAr/Fid0kMTYa/WM='],
  ])('%s / %j', (cs, ts, key, base, signature) => {
    expect(signingKey(cs, ts)).toBe(key)
    expect(computeSignature('HMAC-SHA1', base, cs, ts)).toBe(signature)
  })

  const lookup = memoryLookup({
    users: [{ id: 'jane', apiPassword: 'unused' }],
    consumers: [{ key: 'dpf43f3p2l4k3l03', secret: 'kd94hf93k423kf44' }],
    tokens: [{ token: 'nnch734d00sl2jdk', secret: 'pfkkdhi9sl3r4s00', consumerKey: 'dpf43f3p2l4k3l03', userId: 'jane' }],
  })
  const a5 = (signatureMethod: string, signature: string, scheme: 'http' | 'https' = 'http') =>
    authRequest({
      method: 'GET',
      scheme,
      host: 'photos.example.net',
      url: '/photos?file=vacation.jpg&size=original',
      now: 1191242096_000,
      headers: {
        authorization:
          'OAuth realm="http://photos.example.net/", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_token="nnch734d00sl2jdk", ' +
          `oauth_signature_method="${signatureMethod}", oauth_signature="${signature}", oauth_timestamp="1191242096", oauth_nonce="kllo9940pd9333jh", oauth_version="1.0"`,
      },
    })

  it('accepts the Appendix A.5 header', async () => {
    const result = await verifyOAuth(a5('HMAC-SHA1', 'tR3%2BTy81lMeYAr%2FFid0kMTYa%2FWM%3D'), lookup, new MemoryReplayCache(), opts)
    expect(result.kind).toBe('ok')
  })

  it('accepts its PLAINTEXT form only over HTTPS and only when PLAINTEXT is enabled', async () => {
    const plain = 'kd94hf93k423kf44%26pfkkdhi9sl3r4s00'
    const on = { ...opts, plaintext: true }
    expect((await verifyOAuth(a5('PLAINTEXT', plain, 'https'), lookup, new MemoryReplayCache(), on)).kind).toBe('ok')
    expect(await verifyOAuth(a5('PLAINTEXT', plain, 'http'), lookup, new MemoryReplayCache(), on)).toMatchObject({
      status: 400,
      code: 'signature_method_rejected',
    })
    expect(await verifyOAuth(a5('PLAINTEXT', plain, 'https'), lookup, new MemoryReplayCache(), opts)).toMatchObject({
      status: 400,
      code: 'signature_method_rejected',
    })
    expect(await verifyOAuth(a5('PLAINTEXT', 'kd94hf93k423kf44%26wrong', 'https'), lookup, new MemoryReplayCache(), on)).toMatchObject({
      status: 401,
      code: 'signature_invalid',
    })
  })
})

// Twitter's sample credentials, used by the Twitter page and the golden vectors.
const twitter = {
  consumer: { key: 'xvz1evFS4wEEPTGEFPHBog', secret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw' },
  token: { token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb', secret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE' },
}
const twitterLookup = memoryLookup({
  users: [{ id: 'twitterapi', apiPassword: 'unused' }],
  consumers: [twitter.consumer],
  tokens: [{ ...twitter.token, consumerKey: twitter.consumer.key, userId: 'twitterapi' }],
})
const twitterProtocol = {
  oauth_consumer_key: twitter.consumer.key,
  oauth_nonce: 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg',
  oauth_signature_method: 'HMAC-SHA1',
  oauth_timestamp: '1318622958',
  oauth_token: twitter.token.token,
  oauth_version: '1.0',
}
const twitterNow = 1318622958_000

describe('Twitter "Creating a signature"', () => {
  it('accepts hCtSmYh+iHYCEqBWrE7C7hYmtUk=', async () => {
    const req = authRequest({
      ...twitterExampleRequest,
      now: twitterNow,
      headers: { authorization: header({ ...twitterProtocol, oauth_signature: 'hCtSmYh+iHYCEqBWrE7C7hYmtUk=' }) },
    })
    expect(await verifyOAuth(req, twitterLookup, new MemoryReplayCache(), opts)).toMatchObject({ kind: 'ok', principal: { userId: 'twitterapi' } })
  })

  it('refuses the old-URL signature tnnArxj06cWHq44gCs1OSKk/jLY= for the 1.1 URL', async () => {
    const req = authRequest({
      ...twitterExampleRequest,
      now: twitterNow,
      headers: { authorization: header({ ...twitterProtocol, oauth_signature: 'tnnArxj06cWHq44gCs1OSKk/jLY=' }) },
    })
    expect(await verifyOAuth(req, twitterLookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 401, code: 'signature_invalid' })
  })
})

describe('golden vector f8SWYDqOdWnlqiYNlEfLF3sXHeY= (127.0.0.1:8765), in every placement', () => {
  const content = 'keyword=test%20kw&status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21'
  const signed = { ...twitterProtocol, oauth_signature: 'f8SWYDqOdWnlqiYNlEfLF3sXHeY=' }
  const protocolQuery = Object.entries(signed)
    .map(([k, v]) => `${k}=${percentEncode(v)}`)
    .join('&')
  const base = { method: 'POST', host: '127.0.0.1:8765', contentType: form, now: twitterNow }

  it.each([
    ['header', authRequest({ ...base, url: '/api/statuses/update.json', body: content, headers: { authorization: header(signed) } })],
    ['form body', authRequest({ ...base, url: '/api/statuses/update.json', body: `${content}&${protocolQuery}` })],
    ['query', authRequest({ ...base, url: `/api/statuses/update.json?${protocolQuery}`, body: content })],
  ])('%s', async (_place, req) => {
    expect(await verifyOAuth(req, twitterLookup, new MemoryReplayCache(), opts)).toMatchObject({ kind: 'ok' })
  })

  it('is valid only for host 127.0.0.1:8765', async () => {
    const req = authRequest({ ...base, host: '127.0.0.1:8080', url: '/api/statuses/update.json', body: content, headers: { authorization: header(signed) } })
    expect(await verifyOAuth(req, twitterLookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 401, code: 'signature_invalid' })
  })
})

describe('non-ASCII parameters (keyword=日本語)', () => {
  const request = (body: string, signature: string) =>
    authRequest({
      method: 'POST',
      host: '127.0.0.1:8765',
      url: '/api/statuses/update.json',
      contentType: form,
      body,
      now: twitterNow,
      headers: { authorization: header({ ...twitterProtocol, oauth_signature: signature }) },
    })

  it.each([
    ['percent-encoded', 'keyword=%E6%97%A5%E6%9C%AC%E8%AA%9E&status=hi'],
    ['raw UTF-8', 'keyword=日本語&status=hi'],
  ])('accepts SW6S5vJE63zj27/6GKsD5t+n9sg= with a %s body', async (_how, body) => {
    expect(await verifyOAuth(request(body, 'SW6S5vJE63zj27/6GKsD5t+n9sg='), twitterLookup, new MemoryReplayCache(), opts)).toMatchObject({ kind: 'ok' })
  })

  it('refuses the double-encoded signature Q2MvZM1ftP7yc2kOz256nEhwwFY= of a buggy client', async () => {
    const result = await verifyOAuth(request('keyword=%E6%97%A5%E6%9C%AC%E8%AA%9E&status=hi', 'Q2MvZM1ftP7yc2kOz256nEhwwFY='), twitterLookup, new MemoryReplayCache(), opts)
    expect(result).toMatchObject({ kind: 'fail', status: 401, code: 'signature_invalid', outcome: 'bad_signature' })
  })
})

describe('collectOAuthParameters', () => {
  it('drops realm and oauth_signature from the signed parameters but keeps duplicates of others', () => {
    const collected = collectOAuthParameters(
      authRequest({ url: '/?a=1&a=1', headers: { authorization: 'OAuth realm="r",oauth_consumer_key="k",oauth_signature="s"' } }),
    )
    expect(collected).toMatchObject({ ok: true, params: { source: 'header', signed: [['oauth_consumer_key', 'k'], ['a', '1'], ['a', '1']] } })
  })
})
