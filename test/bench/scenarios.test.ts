// The requests the load generator sends: the deployment's Host on every one, a spread of
// entries, a unique nonce per signed request, and an update body that is exactly what
// was signed (checked with an independent OAuth library).
import { librarySignature } from '../helpers/oauth1a.js'
import { describe, expect, it } from 'vitest'
import { requestSource, type Fixture } from '../../bench/scenarios.js'

const fixture: Fixture = {
  host: 'localhost:18080',
  user: { id: 'benchuser', apiPassword: 'api-pass' },
  tokens: [
    { consumerKey: 'ck', consumerSecret: 'cs', token: 't1', tokenSecret: 's1' },
    { consumerKey: 'ck', consumerSecret: 'cs', token: 't2', tokenSecret: 's2' },
  ],
  bearer: { accessTokens: ['at-1', 'at-2'], issuer: 'http://localhost:18080', keys: [] },
  entryIds: Array.from({ length: 50 }, (_, i) => String(1000 + i)),
}

const params = (header: string) => Object.fromEntries([...header.matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1]!, decodeURIComponent(m[2]!)]))

describe('request sources', () => {
  it('read every seeded entry, with the deployment host, before repeating one', () => {
    const next = requestSource('anonymous', fixture)
    const paths = Array.from({ length: 50 }, () => next())
    expect(new Set(paths.map((r) => r.path)).size).toBe(50)
    for (const r of paths) {
      expect(r.method).toBe('GET')
      expect(r.path).toMatch(/^\/api\/statuses\/show\/1\d{3}\.json$/)
      expect(r.headers.host).toBe('localhost:18080')
    }
  })

  it('give every OAuth and WSSE request its own nonce', () => {
    for (const kind of ['oauth', 'wsse', 'update_oauth'] as const) {
      const next = requestSource(kind, fixture)
      const nonces = Array.from({ length: 2000 }, () => {
        const r = next()
        return kind === 'wsse' ? /Nonce="([^"]+)"/.exec(r.headers['x-wsse']!)![1] : params(r.headers.authorization!).oauth_nonce
      })
      expect(new Set(nonces).size).toBe(2000)
    }
  })

  it('spread OAuth requests over the tokens', () => {
    const next = requestSource('oauth', fixture)
    const tokens = Array.from({ length: 10 }, () => params(next().headers.authorization!).oauth_token)
    expect(new Set(tokens)).toEqual(new Set(['t1', 't2']))
  })

  it('send each OAuth 2.0 request one of the access tokens in the Authorization header only', () => {
    const next = requestSource('oauth2', fixture)
    const sent = Array.from({ length: 10 }, () => next())
    expect(new Set(sent.map((r) => r.headers.authorization))).toEqual(new Set(['Bearer at-1', 'Bearer at-2']))
    for (const r of sent) expect(r.path).not.toContain('access_token')
    const { bearer: _none, ...withoutBearer } = fixture
    expect(() => requestSource('oauth2', withoutBearer)).toThrow(/access tokens/)
  })

  it('sign the statuses/update form body that is sent', () => {
    const r = requestSource('update_oauth', fixture)()
    expect(r).toMatchObject({ method: 'POST', path: '/api/statuses/update.json', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const form = Object.fromEntries(new URLSearchParams(r.body))
    expect(form.keyword).toBe('bench')
    expect(form.status).toMatch(/^benchmark entry \d+/)
    const p = params(r.headers.authorization!)
    const token = fixture.tokens.find((t) => t.token === p.oauth_token)!
    const expected = librarySignature(
      { consumerKey: 'ck', consumerSecret: 'cs', token: token.token, tokenSecret: token.tokenSecret },
      { url: 'http://localhost:18080/api/statuses/update.json', method: 'POST', data: form },
      { nonce: p.oauth_nonce!, timestamp: p.oauth_timestamp! },
    )
    expect(p.oauth_signature).toBe(expected)
  })

  it('ask for a public timeline page of 20, anonymous and with OAuth signing the count', () => {
    expect(requestSource('timeline_anonymous', fixture)()).toEqual({
      method: 'GET',
      path: '/api/statuses/public_timeline.json?count=20',
      headers: { host: 'localhost:18080' },
    })
    const next = requestSource('timeline_oauth', fixture)
    const sent = Array.from({ length: 1000 }, () => next())
    expect(new Set(sent.map((r) => params(r.headers.authorization!).oauth_nonce)).size).toBe(1000)
    const r = sent[0]!
    expect(r).toMatchObject({ method: 'GET', path: '/api/statuses/public_timeline.json?count=20', headers: { host: 'localhost:18080' } })
    const p = params(r.headers.authorization!)
    const token = fixture.tokens.find((t) => t.token === p.oauth_token)!
    const expected = librarySignature(
      { consumerKey: 'ck', consumerSecret: 'cs', token: token.token, tokenSecret: token.tokenSecret },
      { url: 'http://localhost:18080/api/statuses/public_timeline.json', method: 'GET', data: { count: '20' } },
      { nonce: p.oauth_nonce!, timestamp: p.oauth_timestamp! },
    )
    expect(p.oauth_signature).toBe(expected)
  })

  it('send Basic with the seeded API password', () => {
    const r = requestSource('basic', fixture)()
    expect(Buffer.from(r.headers.authorization!.replace(/^Basic /, ''), 'base64').toString()).toBe('benchuser:api-pass')
  })
})
