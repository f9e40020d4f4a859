// The bare reference proxy forwards to a real upstream (started on port 0) the way the
// benchmark needs: the client's Host preserved, method, path, query and body unchanged,
// and the upstream's answer passed back.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildBareProxy } from '../../bench/bare-proxy.js'

describe('bare proxy', () => {
  let upstream: Server
  let proxy: FastifyInstance
  let proxyUrl = ''
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = []

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
        res.writeHead(req.url!.includes('missing') ? 404 : 200, { 'content-type': 'application/json; charset=utf-8' })
        res.end(JSON.stringify({ host: req.headers.host }))
      })
    })
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
    proxy = await buildBareProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` })
    proxyUrl = await proxy.listen({ host: '127.0.0.1', port: 0 })
  })

  afterAll(async () => {
    await proxy?.close()
    await new Promise((r) => upstream?.close(r))
  })

  it('keeps the Host the client sent, and the path and query', async () => {
    const res = await request(`${proxyUrl}/api/statuses/show/123.json?callback=cb`, { headers: { host: 'localhost:8080' } })
    expect(res.statusCode).toBe(200)
    expect(await res.body.json()).toEqual({ host: 'localhost:8080' })
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/api/statuses/show/123.json?callback=cb' })
  })

  it('forwards a form body unchanged and passes the upstream status back', async () => {
    const body = 'keyword=bench&status=a%20b%2Bc'
    const res = await request(`${proxyUrl}/missing/update.json`, {
      method: 'POST',
      headers: { host: 'localhost:8080', 'content-type': 'application/x-www-form-urlencoded' },
      body,
    })
    expect(res.statusCode).toBe(404)
    await res.body.dump()
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/missing/update.json', body })
    expect(seen.at(-1)!.headers['content-type']).toBe('application/x-www-form-urlencoded')
  })
})
