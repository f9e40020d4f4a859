// The developer guide's scope table against the route table (src/common/route-table.ts):
// each operation is listed under the scope it needs, and under no other; nothing listed
// is unknown. The page shows the same table.
import { describe, expect, it } from 'vitest'
import { guideScopes } from '../../src/gateway/guides/developer-guide.js'
import { operations, scopes } from '../../src/common/route-table.js'

describe('the guide\'s scope table', () => {
  it('lists every scope once', () => {
    expect(guideScopes.map((g) => g.scope).sort()).toEqual([...scopes].sort())
  })

  it('lists each operation under the least scope that opens it, as the route table says', () => {
    for (const g of guideScopes) {
      for (const name of g.operations) {
        const op = operations.find((o) => o.name === name)
        expect(op, `${name} is not an operation`).toBeDefined()
        expect(op!.scopes, name).toContain(g.scope)
      }
    }
    // Every operation a token needs a scope for is listed, under its first (least) scope.
    for (const op of operations.filter((o) => o.scopes.length > 0 && o.methods.includes('oauth'))) {
      const listed = guideScopes.filter((g) => g.operations.includes(op.name)).map((g) => g.scope)
      expect(listed, op.name).toEqual([op.scopes[0]])
    }
  })

  it('says that statuses/update with photos needs write_public, and write_private is for photos/create', () => {
    expect(operations.find((o) => o.name === 'statuses/update')!.scopes).toEqual(['write_public'])
    expect(guideScopes.find((g) => g.scope === 'write_public')!.what).toMatch(/with or without photos/)
    expect(guideScopes.find((g) => g.scope === 'write_private')!.operations).toEqual(['photos/create'])
  })
})
