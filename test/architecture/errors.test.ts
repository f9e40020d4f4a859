// Where error answers are shaped (docs/operations.md#error-answers), checked on the source
// itself: only the error-answers plugin installs an error or not-found handler, and only
// the classifier's module writes the number 503, so that every 503 is a dependency away
// as classifyFailure reads it, and a programming error is never one.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? modules(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []))
}

interface Found { file: string; source: ts.SourceFile; node: ts.Node }

/**
 * Every node of every module under src/ that could hold what is looked for (its text has
 * `503` or `Handler`; comments are not nodes, so they never count).
 */
function allNodes(): Found[] {
  const out: Found[] = []
  for (const path of modules(src)) {
    const text = readFileSync(path, 'utf8')
    if (!/503|Handler/.test(text)) continue
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
    const file = relative(src, path)
    const visit = (node: ts.Node): void => {
      out.push({ file, source, node })
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return out
}

let parsed: Found[] | undefined
const nodes = () => (parsed ??= allNodes())

const where = (file: string, source: ts.SourceFile, node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`

/** `x.setErrorHandler(…)` and `x.setNotFoundHandler(…)` calls, and the handler options of a route. */
function handlerInstalls(): string[] {
  const found: string[] = []
  for (const { file, source, node } of nodes()) {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^set(Error|NotFound)Handler$/.test(node.expression.name.text)) found.push(`${where(file, source, node)} ${node.expression.name.text}`)
    // A route's own errorHandler option is a second handler by another name.
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && node.name.text === 'errorHandler') found.push(`${where(file, source, node)} errorHandler option`)
  }
  return found
}

/**
 * The number 503 in code (not in a comment, a string such as the SQLSTATE '23503', or a
 * type listing the statuses a value may have): a status written, passed or compared.
 */
function statusWrites(): string[] {
  const found: string[] = []
  for (const { file, source, node } of nodes()) {
    if (!ts.isNumericLiteral(node) || Number(node.text) !== 503) continue
    if (ts.isLiteralTypeNode(node.parent)) continue
    found.push(`${where(file, source, node)} ${node.parent.getText(source).slice(0, 80)}`)
  }
  return found
}

describe('error answers (docs/operations.md#error-answers)', () => {
  it('are installed by the error-answers plugin only: no other error or not-found handler', () => {
    expect(handlerInstalls().filter((line) => !line.startsWith('common/error-answers.ts:'))).toEqual([])
    // The plugin itself is found, so the search reads what it claims to read.
    expect(handlerInstalls().filter((line) => line.startsWith('common/error-answers.ts:'))).toHaveLength(2)
  })

  it('choose a 503 by the classifier only: no module but common/errors.ts writes the number', () => {
    // The readiness contract (ready/unavailable) is the one other: /readyz answers 503 by itself.
    const allowed = ['common/errors.ts:', 'gateway/plugins/health.ts:']
    expect(statusWrites().filter((line) => !allowed.some((a) => line.startsWith(a)))).toEqual([])
    expect(statusWrites().some((line) => line.startsWith('common/errors.ts:'))).toBe(true)
  })
})
