import { describe, expect, it } from 'vitest'
import { safeNext } from '../../../src/gateway/account-area/next.js'

describe('where the account login form may return a visitor', () => {
  it('accepts the account pages, the authorize step and the login API sign-in', () => {
    for (const p of ['/account', '/account/apps/k', '/oauth/authorize?oauth_token=t', '/auth?api_key=k&api_sig=s&x=1']) expect(safeNext(p)).toBe(p)
  })
  it('refuses other origins, look-alike paths and tricks', () => {
    for (const p of ['https://evil.example/auth', '//evil.example/auth', '/authx', '/auth/../statuses', '/auth\\x', '/auth x', '/authorize', '', null, undefined, `/auth?${'a'.repeat(5000)}`]) expect(safeNext(p)).toBeNull()
  })
})
