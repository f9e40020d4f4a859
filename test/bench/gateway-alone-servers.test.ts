// The gateway-alone benchmark's own servers: the fixed upstream answers every request
// with the same ~700-byte Entry, and the minimal undici proxy passes it through unchanged
// (status, type, bytes, the client's Host), with 502 when the upstream is gone.
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { fixedEntry, startFixedUpstream } from '../../bench/fixed-upstream.js'
import { nginxConfig } from '../../bench/nginx.js'
import { startUndiciProxy } from '../../bench/undici-proxy.js'

const servers: Server[] = []
const port = (s: Server) => (s.address() as AddressInfo).port
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
})

describe('fixed upstream', () => {
  it('answers any request with the same Entry JSON of about 700 bytes', async () => {
    const up = await startFixedUpstream(0)
    servers.push(up)
    for (const path of ['/api/statuses/show/1.json', '/anything?x=1']) {
      const res = await request(`http://127.0.0.1:${port(up)}${path}`)
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      const body = Buffer.from(await res.body.arrayBuffer())
      expect(body.equals(fixedEntry)).toBe(true)
    }
    expect(fixedEntry.length).toBeGreaterThan(600)
    expect(fixedEntry.length).toBeLessThan(800)
    expect(JSON.parse(fixedEntry.toString())).toMatchObject({ keyword: 'bench', user: { id: 'benchuser' } })
  })
})

describe('minimal node:http + undici proxy', () => {
  it('passes the answer through and keeps the client Host; drops hop-by-hop headers', async () => {
    let seen: Record<string, string | string[] | undefined> = {}
    const up = createServer((req, res) => {
      seen = req.headers
      res.writeHead(201, { 'content-type': 'text/plain', 'x-up': 'yes' })
      res.end(`${req.method} ${req.url}`)
    })
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', r))
    servers.push(up)
    const proxy = await startUndiciProxy(0, `http://127.0.0.1:${port(up)}`)
    servers.push(proxy)
    const res = await request(`http://127.0.0.1:${port(proxy)}/a/b?c=d`, { headers: { host: 'localhost:8080', 'x-client': '1', 'proxy-connection': 'x' } })
    expect(res.statusCode).toBe(201)
    expect(res.headers['x-up']).toBe('yes')
    expect(await res.body.text()).toBe('GET /a/b?c=d')
    expect(seen.host).toBe('localhost:8080')
    expect(seen['x-client']).toBe('1')
    expect(seen['proxy-connection']).toBeUndefined()
  })

  it('answers 502 when the upstream does not answer', async () => {
    const gone = createServer()
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r))
    const deadPort = port(gone)
    await new Promise((r) => gone.close(r))
    const proxy = await startUndiciProxy(0, `http://127.0.0.1:${deadPort}`)
    servers.push(proxy)
    const res = await request(`http://127.0.0.1:${port(proxy)}/x`)
    expect(res.statusCode).toBe(502)
    await res.body.dump()
  })
})

describe('nginx configuration', () => {
  it('is a plain keep-alive reverse proxy with one worker and no access log', () => {
    const conf = nginxConfig(8088, 'http://127.0.0.1:9999', '/tmp/x')
    expect(conf).toContain('worker_processes 1;')
    expect(conf).toContain('server 127.0.0.1:9999;')
    expect(conf).toContain('keepalive 128;')
    expect(conf).toContain('listen 127.0.0.1:8088;')
    expect(conf).toContain('access_log off;')
    expect(conf).toContain('proxy_set_header Host $http_host;')
  })
})
