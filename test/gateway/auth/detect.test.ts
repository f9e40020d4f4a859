// Which credential kinds a request carries (docs/gateway.md#which-credentials-each-operation-accepts).
import { describe, expect, it } from 'vitest'
import { detectCredentials, unknownAuthorizationScheme } from '../../../src/gateway/auth/detect.js'
import { authRequest, form } from './fixtures.js'

const wsseToken = 'UsernameToken Username="bob", PasswordDigest="x", Nonce="n", Created="2003-12-15T14:43:07Z"'

describe('detectCredentials', () => {
  it.each([
    ['nothing', {}, []],
    ['Basic', { headers: { authorization: 'Basic YTpi' } }, ['basic']],
    ['OAuth header', { headers: { authorization: 'OAuth oauth_consumer_key="k"' } }, ['oauth']],
    ['X-WSSE', { headers: { 'x-wsse': wsseToken } }, ['wsse']],
    ['X-WSSE with Authorization: WSSE', { headers: { 'x-wsse': wsseToken, authorization: 'WSSE profile="UsernameToken"' } }, ['wsse']],
    ['OAuth in the query', { url: '/api/x.json?a=1&oauth_consumer_key=k&oauth_signature=s' }, ['oauth']],
    ['OAuth in the query, name percent-encoded', { url: '/api/x.json?oauth%5Fsignature=s' }, ['oauth']],
    ['OAuth in a form body', { contentType: form, body: 'status=x&oauth_consumer_key=k' }, ['oauth']],
    ['a lone oauth_token (authorize page)', { url: '/oauth/authorize?oauth_token=t' }, []],
    ['oauth_ names in a non-form body', { contentType: 'text/plain', body: 'oauth_consumer_key=k' }, []],
    ['Basic and X-WSSE', { headers: { authorization: 'Basic YTpi', 'x-wsse': wsseToken } }, ['basic', 'wsse']],
    ['Basic and OAuth in the query', { url: '/?oauth_signature=s', headers: { authorization: 'basic YTpi' } }, ['oauth', 'basic']],
    ['WSSE and OAuth in the body', { contentType: form, body: 'oauth_signature=s', headers: { 'x-wsse': wsseToken } }, ['oauth', 'wsse']],
    ['an unknown scheme', { headers: { authorization: 'Bearer abc' } }, []],
  ] as const)('%s', (_what, r, methods) => {
    expect(detectCredentials(authRequest(r))).toEqual(methods)
  })
})

describe('unknownAuthorizationScheme', () => {
  it('names a scheme no verifier understands', () => {
    expect(unknownAuthorizationScheme(authRequest({ headers: { authorization: 'Bearer abc' } }))).toBe('bearer')
    expect(unknownAuthorizationScheme(authRequest({ headers: { authorization: 'OAuth a="b"' } }))).toBeNull()
    expect(unknownAuthorizationScheme(authRequest({}))).toBeNull()
  })
})

