// How often the apps' servers look for heads and requests past their deadline: often
// enough that each deadline holds within a sixth of itself, never more than every 5 s.
import { describe, expect, it } from 'vitest'
import { clientDeadlines, deadlineCheckInterval } from '../../src/common/client-deadlines.js'
import { loadConfig } from '../../src/common/config.js'

describe('the deadline check interval', () => {
  it('checks the default deadlines every 5 s: a 30 s head deadline holds within 35 s', () => {
    const { http } = loadConfig({ env: { KIGO_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'), KIGO_ADMIN_TOKEN: 'a'.repeat(32) } }).gateway
    expect(http.headersTimeoutMs).toBe(30_000)
    expect(deadlineCheckInterval(http)).toBe(5000)
    expect(clientDeadlines(http).http.connectionsCheckingInterval).toBe(5000)
  })

  it('follows the shorter of the two deadlines, within 250 ms and 5 s', () => {
    expect(deadlineCheckInterval({ headersTimeoutMs: 6000, requestTimeoutMs: 60_000 })).toBe(1000)
    expect(deadlineCheckInterval({ headersTimeoutMs: 30_000, requestTimeoutMs: 3000 })).toBe(500)
    expect(deadlineCheckInterval({ headersTimeoutMs: 1000, requestTimeoutMs: 1500 })).toBe(250)
    expect(deadlineCheckInterval({ headersTimeoutMs: 600_000, requestTimeoutMs: 600_000 })).toBe(5000)
  })
})
