// The notation renderer's cost is linear in the body's length, whatever the body holds.
// An account can post up to 10,000 characters; anonymous readers can ask for any entry's
// HTML (body_formats=html, the public pages). A rule that rescans the body per character
// would let one entry block the event loop for seconds (a URL followed by 9,980 `)` took
// 380 ms when trailing parentheses were counted again for each one).
//
// Adversarial bodies are generated from the pieces each rule looks for (runs of `)`, `[[`,
// `]`, `:`, `id:`, `http://`, nested brackets, long words), repeated up to the body limit,
// and the rendering time per character must stay under a bound that linear rendering
// meets with a wide margin (it costs well under 0.2 µs a character here) and that
// quadratic rendering misses by far at this length. The time is the fastest of a few
// runs, so that a garbage collection or a busy core does not decide the outcome.
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { entryListHtml } from '../../../src/core/render/pages.js'
import { renderNotation, type HtmlVariant } from '../../../src/core/render/notation.js'
import { isPhotoUrl } from '../../../src/core/render/urls.js'
import type { EntryPage, EntryRow } from '../../../src/core/store/types.js'

const bodyLimit = 10_000
/** Microseconds per character: about 20 times what linear rendering costs on a slow run. */
const boundPerChar = 3

const hosts = { domesticHost: 'kigo.example', globalHost: 'global.example', publicScheme: 'https' as const }
const ctx = { baseUrl: 'https://kigo.example', isPhotoUrl: (u: string) => isPhotoUrl(hosts, u) }
const variants: HtmlVariant[] = ['html', 'html_touch', 'html_mobile']

/** The pieces the notation's rules look for, and what ends them. */
const piece = fc.constantFrom(
  ')', '(', '))))', '[[', ']]', '[', ']', ':', 'id:', 'id:abc', 'http://', 'https://a.example/', 'http://a.example/(',
  '[keyword:', '[[a', 'a]]', '.', ',', '?', "'", '\n', '\r\n', ' ', 'x', 'word', '%', '&', '<', '=', '.png', 'é',
)
/** A pattern of a few pieces, repeated until the body reaches the limit. */
function repeatedTo(prefix: string, pattern: string[]): string {
  const unit = pattern.join('')
  const body = prefix + unit.repeat(Math.ceil(bodyLimit / unit.length))
  return [...body].slice(0, bodyLimit).join('')
}
/** Any of the pieces, behind any of the openings. */
const anyBody = fc
  .tuple(fc.constantFrom('', 'http://a.example/', 'id:', '[[', '[keyword:'), fc.array(piece, { minLength: 1, maxLength: 6 }))
  .map(([prefix, pattern]) => repeatedTo(prefix, pattern))
/** One URL running to the end of the body, of the characters a URL may end with. */
const longUrl = fc
  .tuple(
    fc.constantFrom('http://a.example/', 'https://a.example/x', 'HTTP://a.example/'),
    fc.array(fc.constantFrom(')', '(', '.', ',', ':', ';', '!', '?', "'", 'a', '%', '&', '='), { minLength: 1, maxLength: 4 }),
  )
  .map(([prefix, pattern]) => repeatedTo(prefix, pattern))
const adversarialBody = fc.oneof(anyBody, longUrl)

const known = [
  `http://a.example/${')'.repeat(bodyLimit - 17)}`,
  `http://a.example/${'('.repeat(5000)}${')'.repeat(bodyLimit - 5017)}`,
  `https://a.example/${'.'.repeat(bodyLimit - 18)}`,
  '[['.repeat(bodyLimit / 2),
  `[[${'a'.repeat(bodyLimit - 2)}`,
  '[keyword:'.repeat(Math.floor(bodyLimit / 9)),
  'id:'.repeat(Math.floor(bodyLimit / 3)),
  'http://'.repeat(Math.floor(bodyLimit / 7)),
  'http://a.example/'.repeat(Math.floor(bodyLimit / 17)),
  `${'a'.repeat(bodyLimit - 1)})`,
]

function fastestMs(run: () => void, times = 3): number {
  let best = Infinity
  for (let i = 0; i < times; i++) {
    const start = process.hrtime.bigint()
    run()
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6)
  }
  return best
}

function microsPerChar(body: string): number {
  const ms = fastestMs(() => {
    for (const v of variants) renderNotation(body, v, ctx)
  })
  return (ms * 1000) / (body.length * variants.length)
}

describe('rendering cost is linear in the body length', () => {
  test.each(known.map((b) => [JSON.stringify(b.slice(0, 24)), b]))('known worst case %s…', (_name, body) => {
    expect(body.length).toBeLessThanOrEqual(bodyLimit)
    expect(microsPerChar(body)).toBeLessThan(boundPerChar)
  })

  test('generated adversarial bodies up to the body limit', () => {
    fc.assert(
      fc.property(adversarialBody, (body) => {
        expect(microsPerChar(body)).toBeLessThan(boundPerChar)
      }),
      { numRuns: 60 },
    )
  })

  test('a body ten times longer costs about ten times as much, not a hundred', () => {
    const body = (n: number) => `http://a.example/${')'.repeat(n)}`
    const small = fastestMs(() => renderNotation(body(1000), 'html', ctx), 7)
    const large = fastestMs(() => renderNotation(body(10_000), 'html', ctx), 7)
    expect(large / Math.max(small, 0.01)).toBeLessThan(30)
  })

  test('a timeline page of 20 worst-case entries renders within a few milliseconds', () => {
    const entries: EntryRow[] = Array.from({ length: 20 }, (_, i) => ({
      id: String(i + 1),
      authorId: 'mallory',
      authorName: 'Mallory',
      keyword: 'parens',
      body: known[i % known.length]!,
      source: 'API',
      deployment: 'domestic',
      inReplyToStatusId: null,
      inReplyToUserId: null,
      createdAt: new Date('2026-11-21T09:30:00Z'),
    }))
    const page: EntryPage = { entries, replies: new Map(), starred: new Set(), stars: new Map(), followers: new Map() }
    let html = ''
    const ms = fastestMs(() => {
      html = entryListHtml(page, { hosts, deployment: 'domestic' }, 1, false, null, '/').value
    })
    expect(html).toContain('<a href="http://a.example/" rel="nofollow">http://a.example/</a>')
    // 200,000 characters of notation: linear rendering takes a few ms here.
    expect(ms).toBeLessThan(60)
  })
})
