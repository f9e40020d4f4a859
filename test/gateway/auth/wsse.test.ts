// WSSE UsernameToken (SPEC §4.3): the published vectors W1–W4 (VECTORS.md §2) in both
// nonce conventions, every rejection, and the npm `wsse` client.
import { describe, expect, it } from 'vitest'
import wsse, { UsernameToken } from 'wsse'
import type { ReplayCache } from '../../../src/gateway/replay/types.js'
import type { AuthRequest, AuthResult, CredentialLookup } from '../../../src/gateway/auth/types.js'
import { parseCreated, readWsse, verifyUsernameToken, type WsseVerifyOptions } from '../../../src/gateway/auth/wsse.js'
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
