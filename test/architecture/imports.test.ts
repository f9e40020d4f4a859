// The shape of src/ the README's Layout section promises, checked on the import
// statements themselves: no import loop, neither between modules nor between folders, no
// module importing from a folder above its own (a folder's files may use their subfolders
// and src/common, never the other way round), gateway and core never importing each
// other, and the gateway's feature folders (docs/development.md#adding-a-feature) never
// importing one another, nor the host's folders importing them.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? modules(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []))
}

/** Each module's relative imports (static, re-exports and dynamic), as paths of .ts files under src/. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of modules(src)) {
    const text = readFileSync(file, 'utf8')
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')))
    graph.set(relative(src, file), targets.map((t) => relative(src, t)))
  }
  return graph
}

/** The import loops: strongly connected components of more than one module, or a module importing itself. */
function loops(graph: Map<string, string[]>): string[][] {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    indices.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!))
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!indices.has(v)) visit(v)
  return out
}

/**
 * The folder graph: an import from a module in folder A into one in folder B is an edge
 * between the two sibling folders below their nearest common folder (gateway/auth/oauth/x
 * importing gateway/policy/y is gateway/auth -> gateway/policy; gateway/x importing common/y
 * is gateway -> common), so that a loop through a subfolder counts as a loop of the folder
 * holding it. Imports within a folder, into its subfolders or from them are no edge. Each
 * edge lists the imports that make it.
 */
function folderGraph(graph: Map<string, string[]>): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>()
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const a = dirname(from).split('/').filter((s) => s !== '.')
      const b = dirname(to).split('/').filter((s) => s !== '.')
      let common = 0
      while (common < a.length && common < b.length && a[common] === b[common]) common++
      if (common === a.length || common === b.length) continue
      const source = a.slice(0, common + 1).join('/')
      const target = b.slice(0, common + 1).join('/')
      if (!edges.has(source)) edges.set(source, new Map())
      const imports = edges.get(source)!.get(target) ?? []
      const line = `${from} -> ${to}`
      if (!imports.includes(line)) edges.get(source)!.set(target, [...imports, line])
    }
  }
  return edges
}

/** The gateway's feature folders: the folders of src/gateway holding a feature.ts, but host/ whose feature.ts is the contract (paths relative to src/). */
function featureFolders(): string[] {
  return readdirSync(join(src, 'gateway'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'host' && existsSync(join(src, 'gateway', d.name, 'feature.ts')))
    .map((d) => `gateway/${d.name}`)
}

/** The feature folder a module is in, or undefined. */
const featureOf = (module: string, features: readonly string[]) => features.find((f) => module.startsWith(`${f}/`))

/**
 * Imports that tie the gateway's features together: a module of one feature folder
 * importing a module of another, or a module of the host's folders (src/gateway/<folder>
 * that is no feature) importing a feature. The gateway's own files (src/gateway/*.ts) list
 * and mount the features, and may.
 */
function featureCrossings(graph: Map<string, string[]>, features: readonly string[]): string[] {
  const out: string[] = []
  for (const [from, targets] of graph) {
    if (!from.startsWith('gateway/') || dirname(from) === 'gateway') continue
    const own = featureOf(from, features)
    for (const to of targets) {
      const target = featureOf(to, features)
      if (target !== undefined && target !== own) out.push(`${from} -> ${to}`)
    }
  }
  return out
}

describe('the import structure of src/', () => {
  const graph = importGraph()

  it('reads every module and finds their imports', () => {
    expect(graph.size).toBeGreaterThan(50)
    expect(graph.get('main.ts')!.length).toBeGreaterThan(0)
  })

  it('has no import loop', () => {
    expect(loops(graph)).toEqual([])
  })

  it('has no loop between folders', () => {
    const folders = folderGraph(graph)
    expect(folders.get('gateway/oauth1')?.get('gateway/store')?.length).toBeGreaterThan(0)
    const adjacency = new Map([...folders].map(([folder, targets]) => [folder, [...targets.keys()]]))
    const offending = loops(adjacency).map((component) =>
      [...folders]
        .filter(([folder]) => component.includes(folder))
        .flatMap(([, targets]) => [...targets].filter(([target]) => component.includes(target)).flatMap(([, imports]) => imports)),
    )
    expect(offending).toEqual([])
  })

  it('has no module importing from a folder above its own', () => {
    const upward: string[] = []
    for (const [from, targets] of graph) {
      const folder = dirname(from)
      for (const to of targets) {
        const target = dirname(to)
        const above = target !== folder && (target === '.' || `${folder}/`.startsWith(`${target}/`))
        if (above) upward.push(`${from} -> ${to}`)
      }
    }
    expect(upward).toEqual([])
  })

  it('keeps the gateway and the core apart, and common below both', () => {
    const crossing: string[] = []
    for (const [from, targets] of graph) {
      const top = from.split('/')[0]
      for (const to of targets) {
        const other = to.split('/')[0]
        if ((top === 'gateway' && other === 'core') || (top === 'core' && other === 'gateway') || (top === 'common' && other !== 'common')) crossing.push(`${from} -> ${to}`)
      }
    }
    expect(crossing).toEqual([])
  })

  it('keeps the gateway\'s features apart: no feature imports another, and the host imports none', () => {
    const features = featureFolders()
    expect(features).toEqual(expect.arrayContaining(['gateway/login-api', 'gateway/oidc', 'gateway/notices', 'gateway/migration']))
    expect(featureCrossings(graph, features)).toEqual([])
  })

  it('keeps each feature.ts cheap to load: its static imports are its migrations and types (the rest is imported in open)', () => {
    const heavy = featureFolders().flatMap((folder) => {
      const text = readFileSync(join(src, folder, 'feature.ts'), 'utf8')
      return [...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s*'([^']+)'/gm)].map((m) => m[1]!).filter((target) => target !== './migrations.js').map((target) => `${folder}/feature.ts -> ${target}`)
    })
    expect(heavy).toEqual([])
  })

  it('would catch a feature importing a sibling feature, or the host importing a feature', () => {
    const features = ['gateway/alpha', 'gateway/beta']
    const fixture = new Map([
      ['gateway/alpha/feature.ts', ['gateway/alpha/store.ts', 'gateway/host/feature.ts', 'common/sql.ts']],
      ['gateway/alpha/store.ts', ['gateway/beta/store.ts']],
      ['gateway/beta/store.ts', ['gateway/policy/types.ts']],
      ['gateway/policy/types.ts', ['gateway/alpha/feature.ts']],
      ['gateway/features.ts', ['gateway/alpha/feature.ts', 'gateway/beta/feature.ts']],
    ])
    expect(featureCrossings(fixture, features)).toEqual(['gateway/alpha/store.ts -> gateway/beta/store.ts', 'gateway/policy/types.ts -> gateway/alpha/feature.ts'])
  })
})
