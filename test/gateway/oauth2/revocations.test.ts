// What the revocation poll tells the operator (src/gateway/oauth2/revocations.ts): a database
// that does not answer is its outage's own pair of lines (dependency-watch.ts), so the poll
// adds none; any other failure is said once, and once more when a poll works again.
import { describe, expect, it } from 'vitest'
import type { Db } from '../../../src/common/sql.js'
import { RevocationList } from '../../../src/gateway/oauth2/revocations.js'

/** A database whose next answers are the given failures, then empty results. */
function database(failures: Error[]): Db {
  const query = async <T>(): Promise<T[]> => {
    const failure = failures.shift()
    if (failure) throw failure
    return []
  }
  return { engine: 'postgres', query, transaction: async (fn) => fn({ query }), ping: async () => undefined, close: async () => undefined }
}

function list(failures: Error[]) {
  const lines: string[] = []
  const revocations = new RevocationList({ db: database(failures), tokenLifetimeSeconds: 3600, log: (message) => lines.push(message) })
  return { revocations, lines }
}

describe('RevocationList polling', () => {
  it('says nothing of polls that fail for want of the database', async () => {
    const { revocations, lines } = list([new Error('Query read timeout'), new Error('timeout expired')])
    await revocations.poll()
    await revocations.poll()
    await revocations.poll()
    expect(lines).toEqual([])
  })

  it('says once that polls fail for another reason, and once that they work again', async () => {
    const { revocations, lines } = list([new Error('relation "kigo_gateway.oauth2_revocations" does not exist'), new Error('relation "kigo_gateway.oauth2_revocations" does not exist')])
    await revocations.poll()
    await revocations.poll()
    expect(lines).toEqual(['OAuth 2.0 revocations cannot be read; keeping the ones known'])
    await revocations.poll()
    expect(lines).toEqual(['OAuth 2.0 revocations cannot be read; keeping the ones known', 'OAuth 2.0 revocations are read again'])
  })
})
