// Checks the documentation's links the way GitHub renders them: every relative link of a
// Markdown file names a file or folder that exists, every `#anchor` names a heading of the
// file it points into (GitHub's slugs), and every `docs/<file>.md#anchor` cited in the
// code's comments does too.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** One link that does not resolve: where it is, what it says, and why it fails. */
export interface BrokenLink {
  file: string
  line: number
  target: string
  reason: string
}

/** A heading's text as GitHub renders it: code spans, emphasis and links reduced to their text. */
function renderedText(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*\*|__|\*)(.+?)\1/g, '$2')
}

/**
 * The anchors GitHub gives a Markdown file's headings: the rendered text lower-cased,
 * everything but letters, marks, digits, connector punctuation (`_`), spaces and hyphens
 * removed, each space a hyphen; a repeated slug gets `-1`, `-2`, … (github-slugger's rules).
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const { text } of lines(markdown)) {
    const m = /^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$/.exec(text)
    if (!m) continue
    const base = renderedText(m[1]!).toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
    const n = seen.get(base)
    seen.set(base, (n ?? -1) + 1)
    anchors.add(n === undefined ? base : `${base}-${n + 1}`)
  }
  return anchors
}

/** The lines of a Markdown file outside fenced code blocks, with their numbers. */
function lines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = []
  let fence: string | null = null
  markdown.split('\n').forEach((text, i) => {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(text)
    if (f) {
      if (fence === null) fence = f[1]![0]!
      else if (f[1]![0] === fence) fence = null
      return
    }
    if (fence === null) out.push({ text, line: i + 1 })
  })
  return out
}

/** The inline links `[text](target)` of a Markdown file, code spans left out. */
export function markdownLinks(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = []
  for (const { text, line } of lines(markdown)) {
    const prose = text.replace(/`[^`]*`/g, '')
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1]!, line })
  }
  return out
}

const anchorCache = new Map<string, Set<string>>()
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file)
  if (!anchors) {
    anchors = headingAnchors(readFileSync(file, 'utf8'))
    anchorCache.set(file, anchors)
  }
  return anchors
}

/** Why `target` (a path relative to `fromDir`, an optional `#anchor`) does not resolve, or null when it does. */
function resolveTarget(root: string, fromFile: string, target: string): string | null {
  const hash = target.indexOf('#')
  const path = hash === -1 ? target : target.slice(0, hash)
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1))
  const file = path === '' ? fromFile : resolve(dirname(fromFile), decodeURIComponent(path))
  if (!file.startsWith(root)) return 'points outside the repository'
  if (!existsSync(file)) return `no such file ${relative(root, file)}`
  if (anchor === null) return null
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `an anchor into ${relative(root, file)}, which has no headings`
  if (!anchorsOf(file).has(anchor)) return `no heading #${anchor} in ${relative(root, file)}`
  return null
}

/** Every broken relative link or anchor in the given Markdown files (paths relative to root). */
export function brokenMarkdownLinks(root: string, files: string[]): BrokenLink[] {
  anchorCache.clear()
  const broken: BrokenLink[] = []
  for (const name of files) {
    const file = resolve(root, name)
    for (const { target, line } of markdownLinks(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const reason = resolveTarget(root, file, target)
      if (reason) broken.push({ file: name, line, target, reason })
    }
  }
  return broken
}

/** Files under `dir` (relative to root), recursively, skipping build output and dependencies. */
export function filesUnder(root: string, dir: string): string[] {
  const start = join(root, dir)
  if (!existsSync(start)) return []
  if (statSync(start).isFile()) return [dir]
  const out: string[] = []
  for (const entry of readdirSync(start, { withFileTypes: true })) {
    if (['node_modules', 'dist', 'data', 'coverage', 'test-artifacts'].includes(entry.name) || entry.name.startsWith('.')) continue
    const rel = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(root, rel))
    else out.push(rel)
  }
  return out
}

/** Every `docs/<file>.md` or `docs/<file>.md#anchor` cited in the given files that does not resolve. */
export function brokenCitations(root: string, files: string[]): BrokenLink[] {
  anchorCache.clear()
  const broken: BrokenLink[] = []
  for (const name of files) {
    readFileSync(resolve(root, name), 'utf8').split('\n').forEach((text, i) => {
      for (const m of text.matchAll(/(?<![A-Za-z0-9_/.-])docs\/([A-Za-z0-9_.-]+\.md)(#[A-Za-z0-9_%-]+)?/g)) {
        const target = `${m[1]!}${m[2] ?? ''}`
        const reason = resolveTarget(root, join(root, 'docs', 'index'), target)
        if (reason) broken.push({ file: name, line: i + 1, target: `docs/${target}`, reason })
      }
    })
  }
  return broken
}
