// The shape of src/ the README's Layout section promises, checked on the import
// statements themselves: no import loop, no module importing from a folder above its own
// (a folder's files may use their subfolders and src/common, never the other way round),
// and gateway and core never importing each other.
import { readdirSync, readFileSync } from 'node:fs'
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

describe('the import structure of src/', () => {
  const graph = importGraph()

  it('reads every module and finds their imports', () => {
    expect(graph.size).toBeGreaterThan(50)
    expect(graph.get('main.ts')!.length).toBeGreaterThan(0)
  })

  it('has no import loop', () => {
    expect(loops(graph)).toEqual([])
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
})
