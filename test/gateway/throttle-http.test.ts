// Throttling of failed Basic, WSSE and sign-in attempts (docs/operations.md#throttling, rules in
// src/gateway/throttle/attempts.ts) as clients see it: the guesser is stopped, and nobody
// who did nothing wrong is refused because of someone else's failures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { csrfOf, oauthHeader, WebClient } from './provider/helpers.js'

let stack: Stack
const pw: Record<string, string> = {}
const login: Record<string, string> = {}

beforeAll(async () => {
  stack = await startStack({
    overrides: {
      // The test's requests come from loopback, so X-Forwarded-For says which address each is.
      trustedProxies: ['127.0.0.1', '::1'],
      auth: { throttle: { maxFailures: 3, windowSeconds: 60, addressMaxFailures: 8, addressWindowSeconds: 600, userMaxFailures: 6, userWindowSeconds: 600, knownAddressDays: 1 } },
    },
  })
  for (const id of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace']) {
    const u = await stack.addUser(id)
    pw[id] = u.api_password
    login[id] = u.password
  }
})

afterAll(async () => {
  await stack?.close()
})

const post = (user: string, password: string, ip: string) =>
  fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: { authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body: 'status=throttle+test',
  })

async function webSignIn(user: string, password: string, ip: string): Promise<number> {
  const web = new WebClient(stack.url)
  const page = await web.get('/account/login')
  return (await web.post('/account/login', { csrf_token: csrfOf(page.text), username: user, password }, { 'x-forwarded-for': ip })).status
}

describe('a guesser at one address', () => {
  const A = '203.0.113.7'

  it('is stopped for the user it guesses: 429 with Retry-After, even with the right password', async () => {
    expect((await post('alice', pw.alice!, A)).status).toBe(200) // alice works from A
    for (let i = 0; i < 3; i++) expect((await post('bob', 'guess' + i, A)).status).toBe(401)
    for (let i = 0; i < 7; i++) expect((await post('bob', 'guess' + i, A)).status).toBe(429)
    const blocked = await post('bob', pw.bob!, A)
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await blocked.json()).error.code).toBe('too_many_requests')
  })

  it('does not refuse another user\'s valid credentials from the same address', async () => {
    expect((await post('alice', pw.alice!, A)).status).toBe(200)
    expect((await post('carol', pw.carol!, A)).status).toBe(200)
  })

  it('does not stop bob at his own address', async () => {
    expect((await post('bob', pw.bob!, '198.51.100.20')).status).toBe(200)
  })

  it('spraying many users exhausts the address\'s budget: a newcomer there waits, known users do not', async () => {
    // 3 failures so far from A; 5 more names reach the budget of 8.
    for (const user of ['u1', 'u2', 'u3', 'u4', 'u5']) expect((await post(user + 'xyz', 'nope', A)).status).toBe(401)
    expect((await post('sprayed', 'nope', A)).status).toBe(429)
    expect((await post('grace', pw.grace!, A)).status).toBe(429) // never signed in from A
    expect((await post('alice', pw.alice!, A)).status).toBe(200) // signed in from A before
    expect((await post('carol', pw.carol!, A)).status).toBe(200)
  })
})

describe('a guesser spread over many addresses against one user', () => {
  const home = '198.51.100.50'

  it('locks the user out of new addresses, but not their own, their OAuth clients, nor the web sign-in', async () => {
    expect((await post('dave', pw.dave!, home)).status).toBe(200)
    for (let i = 0; i < 6; i++) expect((await post('dave', 'guess', `192.0.2.${10 + i}`)).status).toBe(401)
    expect((await post('dave', pw.dave!, '192.0.2.99')).status).toBe(429) // a new address
    expect((await post('dave', pw.dave!, home)).status).toBe(200) // his own
    // Refused everywhere but at known addresses: reported for the alert (config/alerts.yml).
    expect(await (await fetch(`${stack.adminUrl}/metrics`)).text()).toMatch(/kigo_throttle_refusals_total\{realm="api",rule="user"\} [1-9]/)

    const app = await stack.addOAuthClient('dave', ['write_public'])
    const url = `${stack.url}/api/statuses/update.json`
    const oauth = await fetch(url, {
      method: 'POST',
      headers: { authorization: oauthHeader({ url, consumer: { key: app.consumerKey, secret: app.consumerSecret }, token: { token: app.token, secret: app.tokenSecret }, form: { status: 'via oauth' } }), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '192.0.2.99' },
      body: 'status=via+oauth',
    })
    expect(oauth.status).toBe(200)
    expect(await webSignIn('dave', login.dave!, '192.0.2.99')).toBe(303)
  })

  it('a success forgets the user\'s failures: the new address works again', async () => {
    await new Promise((r) => setTimeout(r, 50)) // the success is written after its answer
    expect((await post('dave', pw.dave!, '192.0.2.100')).status).toBe(200)
  })
})

describe('API and web sign-in are counted apart', () => {
  it('failed sign-ins do not lock the API, and failed API attempts do not lock the sign-in', async () => {
    const F = '203.0.113.80'
    for (let i = 0; i < 3; i++) expect(await webSignIn('erin', 'wrong' + i, F)).toBe(403)
    expect(await webSignIn('erin', login.erin!, F)).toBe(429)
    expect((await post('erin', pw.erin!, F)).status).toBe(200)

    const G = '203.0.113.81'
    for (let i = 0; i < 3; i++) expect((await post('grace', 'wrong' + i, G)).status).toBe(401)
    expect((await post('grace', pw.grace!, G)).status).toBe(429)
    expect(await webSignIn('grace', login.grace!, G)).toBe(303)
  })
})

describe('addresses', () => {
  it('counts IPv6 clients per /64', async () => {
    for (const host of ['a', 'b', 'c']) expect((await post('frank', 'wrong', `2001:db8:1:2::${host}`)).status).toBe(401)
    expect((await post('frank', pw.frank!, '2001:db8:1:2:ffff:1:2:3')).status).toBe(429)
    expect((await post('frank', pw.frank!, '2001:db8:1:3::1')).status).toBe(200)
  })

  it('a success resets the consecutive count of the pair', async () => {
    const H = '203.0.113.90'
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) expect((await post('carol', 'wrong', H)).status).toBe(401)
      expect((await post('carol', pw.carol!, H)).status).toBe(200)
    }
  })
})
