// Client families: a new version of a client is the same client (the usage report's and
// the account page's "moved to OAuth").
import { describe, expect, it } from 'vitest'
import { clientFamily } from '../../../src/gateway/usage/client-name.js'
import { hasMoved, oauthUseByFamily } from '../../../src/gateway/usage/moved.js'

describe('clientFamily', () => {
  it.each([
    ['HaikuDroid/3.2', 'haikudroid'],
    ['HaikuDroid/4.0 (Android 14)', 'haikudroid'],
    ['haikudroid/10.1.2-beta', 'haikudroid'],
    ['Shiny OAuth App/3.1', 'shiny oauth app'],
    ['feed robot 2.1', 'feed robot'],
    ['feed robot', 'feed robot'],
    ['FeedRobot-v2', 'feedrobot'],
    ['curl/8.5.0', 'curl'],
    ['OldApp/1.0 <script>', 'oldapp'],
    ['', ''],
    ['1.0', '1.0'],
  ])('%j is of the family %j', (name, family) => {
    expect(clientFamily(name)).toBe(family)
  })
})

describe('oauthUseByFamily', () => {
  const rows = [
    { method: 'oauth', user: 'bob', client: 'HaikuDroid/4.0', lastSeen: 2000 },
    { method: 'oauth', user: 'bob', client: 'HaikuDroid/4.1', lastSeen: 3000 },
    { method: 'oauth', user: 'eve', client: 'OtherApp/1', lastSeen: 5000 },
    { method: 'basic', user: 'eve', client: 'OtherApp/2', lastSeen: 9000 },
  ]
  const use = oauthUseByFamily(rows)
  it('finds the newest OAuth version of the same user and family', () => {
    expect(use({ user: 'bob', client: 'HaikuDroid/3.2' })).toEqual({ client: 'HaikuDroid/4.1', lastSeen: 3000 })
    expect(hasMoved({ lastSeen: 1000 }, use({ user: 'bob', client: 'HaikuDroid/3.2' }))).toBe(true)
    // Still used with Basic after the OAuth version was last seen: not moved.
    expect(hasMoved({ lastSeen: 4000 }, use({ user: 'bob', client: 'HaikuDroid/3.2' }))).toBe(false)
  })
  it('never across users or families, and never from a legacy row', () => {
    expect(use({ user: 'eve', client: 'HaikuDroid/3.2' })).toBeNull()
    expect(use({ user: 'bob', client: 'OtherApp/1' })).toBeNull()
    expect(use({ user: 'eve', client: 'OtherApp/0.9' })).toEqual({ client: 'OtherApp/1', lastSeen: 5000 })
  })
})
