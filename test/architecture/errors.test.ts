// Where error answers are shaped (docs/operations.md#error-answers), checked on the source
// itself: only the error-answers plugin installs an error or not-found handler, and no
// module but the classifier's chooses a 503, so that every 503 is a dependency away or a
// capacity full as classifyFailure reads it, and a programming error is never one. A 503 is
// chosen by a status written (`reply.code(503)`, `statusCode: 503`, `new ApiError(503, …)`)
// or by calling the catalogue's `errors.unavailable`; the one call allowed outside the
// classifier is an area's wording of its 503 (`unavailable: () => errors.unavailable(…)`),
// which only the classifier calls.
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

/** Every node of one module's source (comments are not nodes, so they never count). */
function nodesOf(file: string, text: string): Found[] {
  const out: Found[] = []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const visit = (node: ts.Node): void => {
    out.push({ file, source, node })
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

/** Every node of every module under src/ that could hold what is looked for (its text has `503`, `unavailable` or `Handler`). */
function allNodes(): Found[] {
  return modules(src).flatMap((path) => {
    const text = readFileSync(path, 'utf8')
    return /503|unavailable|Handler/.test(text) ? nodesOf(relative(src, path), text) : []
  })
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

/** True inside the value of a property named `unavailable`: an area's wording of its 503, called by the classifier only. */
function inWording(node: ts.Node): boolean {
  for (let n: ts.Node | undefined = node.parent; n !== undefined; n = n.parent) {
    if ((ts.isPropertyAssignment(n) || ts.isMethodDeclaration(n)) && ts.isIdentifier(n.name) && n.name.text === 'unavailable') return true
    if (ts.isSourceFile(n)) return false
  }
  return false
}

/**
 * Where a 503 is chosen, in `found`: the number 503 in code (not in a comment, a string
 * such as the SQLSTATE '23503', or a type listing the statuses a value may have), a
 * status written, passed or compared; and every use of the catalogue's
 * `errors.unavailable` but an area's wording.
 */
function choicesOf503(found: Found[]): string[] {
  const out: string[] = []
  for (const { file, source, node } of found) {
    const at = () => `${where(file, source, node)} ${node.parent.getText(source).slice(0, 80)}`
    if (ts.isNumericLiteral(node) && Number(node.text) === 503 && !ts.isLiteralTypeNode(node.parent)) out.push(at())
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'unavailable' && ts.isIdentifier(node.expression) && node.expression.text === 'errors' && !inWording(node)) out.push(at())
  }
  return out
}

describe('error answers (docs/operations.md#error-answers)', () => {
  it('are installed by the error-answers plugin only: no other error or not-found handler', () => {
    expect(handlerInstalls().filter((line) => !line.startsWith('common/error-answers.ts:'))).toEqual([])
    // The plugin itself is found, so the search reads what it claims to read.
    expect(handlerInstalls().filter((line) => line.startsWith('common/error-answers.ts:'))).toHaveLength(2)
  })

  it('choose a 503 by the classifier only: no module but common/errors.ts writes the status or calls errors.unavailable outside a wording', () => {
    const choices = choicesOf503(nodes())
    expect(choices.filter((line) => !line.startsWith('common/errors.ts:'))).toEqual([])
    // The classifier's module is found, so the search reads what it claims to read.
    expect(choices.some((line) => line.startsWith('common/errors.ts:'))).toBe(true)
  })

  it('the search finds every way a module could choose a 503 itself, and lets a wording be', () => {
    const sample = [
      'app.get("/a", async (_q, reply) => reply.code(503).send({}))',
      'app.get("/b", async (_q, reply) => reply.code(ok ? 200 : 503).send({}))',
      'const answer = { statusCode: 503 }',
      'throw new ApiError(503, "store_unavailable", "away")',
      'callback(errors.unavailable("service_unavailable", "busy", 2))',
      'if (away) throw errors.unavailable()',
      'const later = errors.unavailable',
      'const wording = { unavailable: () => errors.unavailable("store_unavailable", "away"), internalMessage: "x" }',
      'app.answerErrorsAs({ wording: { unavailable() { return errors.unavailable() } } })',
      'if ((err as { code?: string }).code === "23503") throw new NotFound("no user")',
      'type Status = 400 | 503',
    ].join('\n')
    const lines = choicesOf503(nodesOf('sample.ts', sample)).map((line) => Number(line.split(' ')[0]!.split(':')[1]))
    expect(lines).toEqual([1, 2, 3, 4, 5, 6, 7])
  })
})
