// WSSE UsernameToken (docs/gateway.md#wsse-usernametoken): the published vectors W1–W4 (Pilgrim's
// xml.com "Atom Authentication", Movable Type's, XML::Atom::Client's) in both
// nonce conventions, every rejection, and the npm `wsse` client.
import { describe, expect, it } from 'vitest'
import wsse, { UsernameToken } from 'wsse'
import type { ReplayCache } from '../../../src/gateway/replay/types.js'
import type { AuthRequest, AuthResult, CredentialLookup } from '../../../src/gateway/domain/auth.js'
import { parseCreated, parseUsernameToken, readWsse, verifyUsernameToken, type WsseVerifyOptions } from '../../../src/gateway/auth/wsse.js'
import { authRequest, DownReplayCache, MemoryReplayCache, memoryLookup } from './fixtures.js'

/** The gateway's WSSE pipeline (src/gateway/authenticate.ts): read the UsernameToken, then verify it. */
async function verifyWsse(req: AuthRequest, lookup: CredentialLookup, replay: ReplayCache, opts: WsseVerifyOptions): Promise<AuthResult> {
  const token = readWsse(req)
  return 'kind' in token ? token : verifyUsernameToken(token, req.now, lookup, replay, opts)
}

const lookup = memoryLookup({
  users: [
    { id: 'bob', name: 'Bob', apiPassword: 'taadtaadpstcsm' },
    { id: 'Melody', name: 'Melody', apiPassword: 'Nelson' },
  ],
})
const opts = { windowSeconds: 300 }

function token(t: { username: string; digest: string; nonce: string; created: string }): string {
  return `UsernameToken Username="${t.username}", PasswordDigest="${t.digest}", Nonce="${t.nonce}", Created="${t.created}"`
}
function request(xwsse: string, now: number, withAuthorization = true) {
  return authRequest({ now, headers: { 'x-wsse': xwsse, ...(withAuthorization ? { authorization: 'WSSE profile="UsernameToken"' } : {}) } })
}
const b64 = (s: string) => Buffer.from(s).toString('base64')

const pilgrim = { username: 'bob', digest: 'quR/EWLAV4xLf9Zqyw4pDmfV9OY=', created: '2003-12-15T14:43:07Z' }
const pilgrimNow = Date.parse(pilgrim.created)

describe('published vectors', () => {
  it.each([
    ['W1 (literal nonce)', { ...pilgrim, nonce: 'd36e316282959a9ed4c89851497a717f' }, 'literal'],
    ['W2 (the same nonce in Base64)', { ...pilgrim, nonce: 'ZDM2ZTMxNjI4Mjk1OWE5ZWQ0Yzg5ODUxNDk3YTcxN2Y=' }, 'base64'],
    ['W3 (Movable Type, literal)', { username: 'Melody', digest: 'VfJavTaTy3BhKkeY/WVu9L6cdVA=', nonce: '7c19aeed85b93d35ba42e357f10ca19bf314d622', created: '2004-01-20T01:09:39Z' }, 'literal'],
    ['W3 (its nonce sent in Base64)', { username: 'Melody', digest: 'VfJavTaTy3BhKkeY/WVu9L6cdVA=', nonce: b64('7c19aeed85b93d35ba42e357f10ca19bf314d622'), created: '2004-01-20T01:09:39Z' }, 'base64'],
    ['W4 (XML::Atom::Client, raw bytes in Base64)', { ...pilgrim, digest: 'cYRchtqiVwtAdL8swh0GULl4od8=', nonce: 'ASNFZ4mrze8BI0VniavN7wEjRWc=' }, 'base64'],
  ] as const)('%s verifies', async (_name, t, style) => {
    const result = await verifyWsse(request(token(t), Date.parse(t.created)), lookup, new MemoryReplayCache(), opts)
    expect(result).toEqual({
      kind: 'ok',
      principal: { userId: t.username, userName: t.username === 'bob' ? 'Bob' : 'Melody', method: 'wsse', consumerKey: '', scopes: [], wsseNonceStyle: style },
    })
  })

  it('W1 without the accompanying Authorization header', async () => {
    const result = await verifyWsse(request(token({ ...pilgrim, nonce: 'd36e316282959a9ed4c89851497a717f' }), pilgrimNow, false), lookup, new MemoryReplayCache(), opts)
    expect(result.kind).toBe('ok')
  })

  it('W4 read as a literal nonce does not verify (the digest is over the raw bytes)', async () => {
    // The same digest with the nonce's Base64 text hashed as-is must fail.
    const t = { ...pilgrim, digest: 'cYRchtqiVwtAdL8swh0GULl4od8=', nonce: b64('ASNFZ4mrze8BI0VniavN7wEjRWc=') }
    expect(await verifyWsse(request(token(t), pilgrimNow), lookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 401, code: 'bad_credentials' })
  })
})

describe('parsing', () => {
  it('takes the fields in any order, with "," or ", " separators', async () => {
    const x = `UsernameToken Created="${pilgrim.created}",Nonce="d36e316282959a9ed4c89851497a717f",PasswordDigest="${pilgrim.digest}",Username="bob"`
    expect((await verifyWsse(request(x, pilgrimNow), lookup, new MemoryReplayCache(), opts)).kind).toBe('ok')
  })

  it.each(['Username', 'PasswordDigest', 'Nonce', 'Created'])('a missing %s is 400 naming it', async (field) => {
    const x = token({ ...pilgrim, nonce: 'abc' }).replace(new RegExp(`,? ?${field}="[^"]*"`), '')
    expect(await verifyWsse(request(x, pilgrimNow), lookup, new MemoryReplayCache(), opts)).toMatchObject({
      kind: 'fail',
      status: 400,
      outcome: 'malformed',
      message: `X-WSSE requires ${field}`,
    })
  })

  it.each([
    ['not a UsernameToken', 'Bearer x'],
    ['unterminated value', 'UsernameToken Username="bob'],
    ['repeated field', token({ ...pilgrim, nonce: 'a' }) + ', Nonce="b"'],
    ['Created without a zone', token({ ...pilgrim, nonce: 'a', created: '2003-12-15T14:43:07' })],
    ['Created not a date', token({ ...pilgrim, nonce: 'a', created: 'yesterday' })],
    ['Created on 31 February', token({ ...pilgrim, nonce: 'a', created: '2003-02-31T14:43:07Z' })],
  ])('%s is 400', async (_what, x) => {
    expect(await verifyWsse(request(x, pilgrimNow), lookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 400, outcome: 'malformed' })
  })

  it('Authorization: WSSE without X-WSSE is 400', async () => {
    const req = authRequest({ headers: { authorization: 'WSSE profile="UsernameToken"' } })
    expect(await verifyWsse(req, lookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 400, outcome: 'malformed' })
  })

  it.each([
    ['2003-12-15T14:43:07Z', Date.UTC(2003, 11, 15, 14, 43, 7)],
    ['2003-12-15T14:43:07.250Z', Date.UTC(2003, 11, 15, 14, 43, 7, 250)],
    ['2015-05-18T14:50:17-04:00', Date.UTC(2015, 4, 18, 18, 50, 17)],
    ['2015-05-18T14:50:17+0900', Date.UTC(2015, 4, 18, 5, 50, 17)],
  ])('reads Created %s', (created, ms) => {
    expect(parseCreated(created)).toBe(ms)
  })
})

describe('rejections', () => {
  const w1 = request(token({ ...pilgrim, nonce: 'd36e316282959a9ed4c89851497a717f' }), pilgrimNow)
  const w2 = request(token({ ...pilgrim, nonce: 'ZDM2ZTMxNjI4Mjk1OWE5ZWQ0Yzg5ODUxNDk3YTcxN2Y=' }), pilgrimNow)

  it('a replayed token (401 replay), claimed for twice the window', async () => {
    const replay = new MemoryReplayCache(() => pilgrimNow)
    expect((await verifyWsse(w1, lookup, replay, opts)).kind).toBe('ok')
    expect(await verifyWsse(w1, lookup, replay, opts)).toMatchObject({ status: 401, code: 'replay', outcome: 'replay', attemptedUser: 'bob' })
    expect(replay.claims[0]!.ttlSeconds).toBeGreaterThanOrEqual(600)
  })

  it('the same nonce bytes sent in the other convention, either way round', async () => {
    const replay = new MemoryReplayCache(() => pilgrimNow)
    expect((await verifyWsse(w1, lookup, replay, opts)).kind).toBe('ok')
    expect(await verifyWsse(w2, lookup, replay, opts)).toMatchObject({ status: 401, code: 'replay' })
    const replay2 = new MemoryReplayCache(() => pilgrimNow)
    expect((await verifyWsse(w2, lookup, replay2, opts)).kind).toBe('ok')
    expect(await verifyWsse(w1, lookup, replay2, opts)).toMatchObject({ status: 401, code: 'replay' })
  })

  it.each([
    ['stale', pilgrimNow + 301_000],
    ['future', pilgrimNow - 301_000],
  ])('a %s Created (401 stale)', async (_what, now) => {
    expect(await verifyWsse({ ...w1, now }, lookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 401, code: 'stale', outcome: 'stale' })
  })

  it('accepts Created at the edges of the window', async () => {
    expect((await verifyWsse({ ...w1, now: pilgrimNow + 300_000 }, lookup, new MemoryReplayCache(), opts)).kind).toBe('ok')
    expect((await verifyWsse({ ...w1, now: pilgrimNow - 300_000 }, lookup, new MemoryReplayCache(), opts)).kind).toBe('ok')
  })

  it('a wrong password, and an unknown user, alike (401 bad_credentials)', async () => {
    const wrong = request(token({ ...pilgrim, digest: 'AAAAEWLAV4xLf9Zqyw4pDmfV9OY=', nonce: 'd36e316282959a9ed4c89851497a717f' }), pilgrimNow)
    expect(await verifyWsse(wrong, lookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 401, code: 'bad_credentials', attemptedUser: 'bob' })
    const unknown = request(token({ ...pilgrim, username: 'robert', nonce: 'd36e316282959a9ed4c89851497a717f' }), pilgrimNow)
    expect(await verifyWsse(unknown, lookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 401, code: 'bad_credentials', attemptedUser: 'robert' })
  })

  it('does not spend the nonce of a token that failed', async () => {
    const replay = new MemoryReplayCache(() => pilgrimNow)
    const wrong = request(token({ ...pilgrim, digest: 'AAAAEWLAV4xLf9Zqyw4pDmfV9OY=', nonce: 'd36e316282959a9ed4c89851497a717f' }), pilgrimNow)
    await verifyWsse(wrong, lookup, replay, opts)
    expect((await verifyWsse(w1, lookup, replay, opts)).kind).toBe('ok')
  })

  it('a replay cache that is down (503 unavailable)', async () => {
    expect(await verifyWsse(w1, lookup, new DownReplayCache(), opts)).toMatchObject({ status: 503, outcome: 'unavailable', retryAfterSeconds: 5 })
  })
})

describe('interop: npm wsse', () => {
  it.each([false, true])('tokens it generates verify (nonceBase64: %s)', async (nonceBase64) => {
    const t = wsse({ username: 'bob', password: 'taadtaadpstcsm' })
    const result = await verifyWsse(request(t.getWSSEHeader({ nonceBase64 }), Date.now()), lookup, new MemoryReplayCache(), opts)
    expect(result).toMatchObject({ kind: 'ok', principal: { userId: 'bob', wsseNonceStyle: nonceBase64 ? 'base64' : 'literal' } })
  })

  it('its README token (W1) in both settings is one nonce: the second is a replay', async () => {
    const t = new UsernameToken({ username: 'bob', password: 'taadtaadpstcsm', created: pilgrim.created, nonce: 'd36e316282959a9ed4c89851497a717f' })
    const replay = new MemoryReplayCache(() => pilgrimNow)
    expect((await verifyWsse(request(t.getWSSEHeader(), pilgrimNow), lookup, replay, opts)).kind).toBe('ok')
    expect(await verifyWsse(request(t.getWSSEHeader({ nonceBase64: true }), pilgrimNow), lookup, replay, opts)).toMatchObject({ code: 'replay' })
  })

  it('a token for the wrong password does not verify', async () => {
    const t = wsse({ username: 'bob', password: 'not-it' })
    expect(await verifyWsse(request(t.getWSSEHeader(), Date.now()), lookup, new MemoryReplayCache(), opts)).toMatchObject({ status: 401 })
  })
})

/**
 * The formats as regular expressions, the way they read in docs/gateway.md#wsse-usernametoken: the reference the
 * character-by-character parsers of wsse.ts are held to, on generated text.
 */
const reference = {
  created(s: string): number {
    const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?:(Z|z)|([+-])(\d{2}):?(\d{2}))$/.exec(s)
    if (m === null) return NaN
    const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
    if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return NaN
    const t = Date.UTC(year, month - 1, day, hour, minute, second)
    if (new Date(t).getUTCDate() !== day) return NaN
    const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3))
    if (m[9] === undefined) return t + ms
    if (Number(m[10]) > 23 || Number(m[11]) > 59) return NaN
    return t + ms - (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11])) * 60_000
  },
  token(header: string): Record<string, string> | 'error' {
    const m = /^ *usernametoken((?:[ \t,]*[^=]*="[^"]*")*)[ \t,]*$/i.exec(header)
    if (m === null || header.length > 4096) return 'error'
    const found: Record<string, string> = {}
    for (const f of m[1]!.matchAll(/([^=]*)="([^"]*)"([ \t,]*)/g)) {
      const name = f[1]!.replace(/^[ \t,]*/, '').trim().toLowerCase()
      if (['username', 'passworddigest', 'nonce', 'created'].includes(name)) {
        if (name in found) return 'error'
        found[name] = f[2]!
      }
    }
    return ['username', 'passworddigest', 'nonce', 'created'].every((k) => found[k]) ? found : 'error'
  },
}

/** A seeded generator, so that a failure can be replayed. */
function generator(seed: number) {
  let x = seed
  const next = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!
  const mutate = (s: string): string => {
    const at = Math.floor(next() * (s.length + 1))
    const c = pick(['0', '9', '-', ':', 'T', 'Z', 'z', '+', '.', ',', ' ', '"', '=', 'A', '\t', '\u00a0', ''])
    return pick([0, 1, 2]) === 0 ? s.slice(0, at) + c + s.slice(at) : s.slice(0, at) + c + s.slice(at + 1)
  }
  return { next, pick, mutate }
}

describe('the parsers agree with the formats as regular expressions', () => {
  it('Created: 20,000 generated date-times, well formed and not', () => {
    const g = generator(18)
    const two = (n: number) => String(n).padStart(2, '0')
    let valid = 0
    for (let k = 0; k < 20_000; k++) {
      const date = `${String(Math.floor(g.next() * 10000)).padStart(4, '0')}-${two(Math.floor(g.next() * 14))}-${two(Math.floor(g.next() * 33))}T${two(Math.floor(g.next() * 25))}:${two(Math.floor(g.next() * 61))}:${two(Math.floor(g.next() * 62))}`
      const fraction = g.pick(['', '', '.5', '.25', ',123', '.123456789', '.1234567890', '.'])
      const zone = g.pick(['Z', 'z', '+09:00', '-0430', '+2400', '-12:60', '+1', '', 'UTC'])
      let s = date + fraction + zone
      if (g.next() < 0.3) s = g.mutate(s)
      const expected = reference.created(s)
      if (!Number.isNaN(expected)) valid++
      expect([s, parseCreated(s)]).toEqual([s, expected])
    }
    expect(valid).toBeGreaterThan(1000)
  })

  it('UsernameToken: 20,000 generated headers, well formed and not', () => {
    const g = generator(43)
    let valid = 0
    for (let k = 0; k < 20_000; k++) {
      const fields = [
        [g.pick(['Username', 'username', 'USERNAME', ' Username ', 'User']), 'bob'],
        [g.pick(['PasswordDigest', 'passworddigest', 'Passworddigest\u00a0']), 'quR/EWLAV4xLf9Zqyw4pDmfV9OY='],
        [g.pick(['Nonce', 'NONCE', 'Nonce\t']), g.pick(['abc', '', 'ZDM2=='])],
        [g.pick(['Created', 'created']), '2003-12-15T14:43:07Z'],
        ...(g.next() < 0.2 ? [[g.pick(['Extra', 'Nonce', 'Algorithm']), 'x']] : []),
      ].sort(() => g.next() - 0.5)
      const sep = () => g.pick([', ', ',', ' , ', ',\t', ' '])
      let header = `${g.pick(['UsernameToken ', 'usernametoken ', '  UsernameToken', 'UsernameToken,'])}${fields.map(([name, value]) => `${name}="${value}"`).join(sep())}${g.pick(['', ',', ' '])}`
      if (g.next() < 0.3) header = g.mutate(header)
      const expected = reference.token(header)
      const parsed = parseUsernameToken(header)
      if (expected !== 'error') valid++
      expect([header, typeof parsed === 'string' ? 'error' : { username: parsed.username, passworddigest: parsed.passwordDigest, nonce: parsed.nonce, created: parsed.created }]).toEqual([header, expected])
    }
    expect(valid).toBeGreaterThan(1000)
  })
})
