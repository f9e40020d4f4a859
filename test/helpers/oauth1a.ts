// An npm `oauth-1.0a` client as the tests use it: HMAC-SHA1 or HMAC-SHA256 over
// node:crypto, with oauth_body_hash computed by the same algorithm.
import { createHash, createHmac } from 'node:crypto'
import OAuth1a from 'oauth-1.0a'

export type HmacMethod = 'HMAC-SHA1' | 'HMAC-SHA256'

export function oauth1aClient(consumer: { key: string; secret: string }, method: HmacMethod = 'HMAC-SHA1'): OAuth1a {
  const algorithm = method === 'HMAC-SHA1' ? 'sha1' : 'sha256'
  return new OAuth1a({
    consumer,
    signature_method: method,
    hash_function: (base, key) => createHmac(algorithm, key).update(base).digest('base64'),
    body_hash_function: (body) => createHash(algorithm).update(body).digest('base64'),
  })
}

/**
 * The library's HMAC-SHA1 signature for a request signed with `nonce` and `timestamp`: the
 * reference a signature made elsewhere (the benchmark's signer) is compared with.
 */
export function librarySignature(
  c: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string },
  request: { url: string; method: string; data: Record<string, string> },
  signed: { nonce: string; timestamp: string },
): string {
  return oauth1aClient({ key: c.consumerKey, secret: c.consumerSecret }).getSignature(request, c.tokenSecret, {
    oauth_consumer_key: c.consumerKey,
    oauth_token: c.token,
    oauth_nonce: signed.nonce,
    oauth_timestamp: Number(signed.timestamp),
    oauth_signature_method: 'HMAC-SHA1',
    oauth_version: '1.0',
  })
}
