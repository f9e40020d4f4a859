// The pages' security headers (src/common/security-headers.ts, docs/security.md#pages):
// one helmet configuration, each page's own form-action origins and script nonce, and
// nothing of one page's policy on another's answer.
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { securePage } from '../../src/common/security-headers.js'

let app: FastifyInstance

beforeAll(async () => {
  app = Fastify()
  app.get('/consent', async (request, reply) => {
    const origin = (request.query as { origin?: string }).origin
    return securePage(reply, { formAction: origin ? [origin] : [] }).type('text/html').send('<p>consent</p>')
  })
  app.get('/guide', async (request, reply) => securePage(reply, { scriptNonce: (request.query as { nonce: string }).nonce }).type('text/html').send('<p>guide</p>'))
  app.get('/public', async (_request, reply) => securePage(reply, { formAction: 'none', images: "'self'", referrer: 'same-origin', cache: 'no-cache' }).type('text/html').send('<p>entries</p>'))
  app.get('/api', async () => ({ ok: true }))
  await app.ready()
})

afterAll(async () => {
  await app.close()
})

const directives = (csp: string | undefined) => (csp ?? '').split(';').map((d) => d.trim())

describe('a page', () => {
  it('gets the shared policy: nothing loads but inline style, no framing, no sniffing, no Referer, never cached', async () => {
    const res = await app.inject('/consent')
    expect(directives(res.headers['content-security-policy'] as string)).toEqual(["default-src 'none'", "style-src 'unsafe-inline'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"])
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['cross-origin-resource-policy']).toBe('same-origin')
    // Left to whoever terminates TLS, and to a client's sign-in pop-up.
    expect(res.headers['strict-transport-security']).toBeUndefined()
    expect(res.headers['cross-origin-opener-policy']).toBeUndefined()
  })

  it("gets its own form-action origin and script nonce, and never another page's", async () => {
    const [a, b, plain] = await Promise.all([app.inject('/consent?origin=https://a.example'), app.inject('/consent?origin=https://b.example'), app.inject('/consent')])
    expect(directives(a.headers['content-security-policy'] as string)).toContain("form-action 'self' https://a.example")
    expect(directives(b.headers['content-security-policy'] as string)).toContain("form-action 'self' https://b.example")
    expect(directives(plain.headers['content-security-policy'] as string)).toContain("form-action 'self'")
    const [one, two] = await Promise.all([app.inject('/guide?nonce=bm9uY2Ux'), app.inject('/guide?nonce=bm9uY2Uy')])
    expect(directives(one.headers['content-security-policy'] as string)).toContain("script-src 'nonce-bm9uY2Ux'")
    expect(directives(two.headers['content-security-policy'] as string)).toContain("script-src 'nonce-bm9uY2Uy'")
    expect(plain.headers['content-security-policy']).not.toContain('script-src')
  })

  it('of the public site: images of its own origin, no form, the Referer within the site, revalidated', async () => {
    const res = await app.inject('/public')
    expect(directives(res.headers['content-security-policy'] as string)).toEqual(["default-src 'none'", "style-src 'unsafe-inline'", "img-src 'self'", "form-action 'none'", "frame-ancestors 'none'", "base-uri 'none'"])
    expect(res.headers['referrer-policy']).toBe('same-origin')
    expect(res.headers['cache-control']).toBe('no-cache')
  })

  it('an API answer beside the pages carries none of it', async () => {
    const res = await app.inject('/api')
    expect(res.headers['content-security-policy']).toBeUndefined()
    expect(res.headers['x-frame-options']).toBeUndefined()
  })
})
