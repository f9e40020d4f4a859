// The documentation can be followed: every relative link of README.md, CHANGELOG.md,
// docs/*.md and bench/results/*.md names a file that exists, every #anchor a heading (GitHub's slugs), and every
// docs/<file>.md#anchor cited in the code's comments resolves too.
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { brokenCitations, brokenMarkdownLinks, filesUnder, headingAnchors } from '../helpers/doc-links.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

const markdownIn = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.md')).map((f) => `${dir}/${f}`)
const markdownFiles = ['README.md', 'CHANGELOG.md', ...markdownIn('docs'), ...markdownIn('bench/results')]
const codeFiles = ['src', 'test', 'bench', 'bin', 'config', 'examples', 'Dockerfile', 'docker-compose.yml', 'package.json']
  .flatMap((d) => filesUnder(root, d))
  .filter((f) => /\.(ts|js|mjs|cjs|json|ya?ml|py|pl|rb|sh)$|Dockerfile$/.test(f))

const show = (broken: { file: string; line: number; target: string; reason: string }[]) =>
  broken.map((b) => `${b.file}:${b.line}: ${b.target}: ${b.reason}`).join('\n')

/** A scratch repository with the given files. */
function scratch(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kigo-doc-links-'))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  return dir
}

describe('documentation links', () => {
  it('has the docs the README sends readers to', () => {
    for (const f of ['docs/api.md', 'docs/gateway.md', 'docs/operations.md', 'docs/security.md', 'docs/performance.md']) {
      expect(markdownFiles).toContain(f)
    }
  })

  it('resolves every relative link and anchor of README.md, CHANGELOG.md, docs/*.md and the benchmark notes', () => {
    expect(show(brokenMarkdownLinks(root, markdownFiles))).toBe('')
  })

  it('resolves every docs/<file>.md#anchor cited in src/, test/, bench/ and the other code', () => {
    expect(codeFiles.length).toBeGreaterThan(100)
    expect(show(brokenCitations(root, codeFiles))).toBe('')
  })

  it('makes the anchors GitHub makes', () => {
    const anchors = headingAnchors(
      [
        '# kigo',
        '## Settings in config/default.json',
        "### The usage report's bounds",
        '### OAuth 1.0a',
        '## `callback` and **body_formats**',
        '## Notes',
        '## Notes',
        '```sh',
        '# not a heading',
        '```',
      ].join('\n'),
    )
    expect([...anchors]).toEqual(['kigo', 'settings-in-configdefaultjson', 'the-usage-reports-bounds', 'oauth-10a', 'callback-and-body_formats', 'notes', 'notes-1'])
  })

  it('reports a missing file, a missing heading and a cited anchor that names no heading', () => {
    const docs = 'docs'
    const dir = scratch({
      'README.md': `[ok](${docs}/a.md#first) [gone](${docs}/missing.md) [no heading](${docs}/a.md#second) [in page](#kigo) [bad in page](#nope) [web](https://example.org/#x)\n# kigo\n`,
      [`${docs}/a.md`]: '# First\n`[not a link](nowhere.md)`\n',
      'src/x.ts': `// see ${docs}/a.md#first and ${docs}/a.md#gone and ${docs}/b.md\n`,
    })
    expect(brokenMarkdownLinks(dir, ['README.md', `${docs}/a.md`]).map((b) => [b.target, b.reason])).toEqual([
      [`${docs}/missing.md`, `no such file ${docs}/missing.md`],
      [`${docs}/a.md#second`, `no heading #second in ${docs}/a.md`],
      ['#nope', 'no heading #nope in README.md'],
    ])
    expect(brokenCitations(dir, ['src/x.ts']).map((b) => b.target)).toEqual([`${docs}/a.md#gone`, `${docs}/b.md`])
  })
})
