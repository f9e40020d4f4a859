// The one way kigo writes HTML, on both sides (the core's public pages, the gateway's
// account, consent, developer and migration pages, the operator dashboard): a tagged
// template that escapes every interpolated value, in text and in quoted attributes alike,
// unless the value is itself markup built by `html` (or declared trusted with `trusted`).
// A page that concatenates strings instead can forget an escape; a page built with `html`
// cannot.
import escapeHtml from 'escape-html'
import { isoSeconds } from './time.js'

/** Markup built by `html` (its interpolations escaped), safe to embed as it is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

/** What a template may interpolate: text (escaped), numbers, markup, nothing, or a list of these (joined). */
export type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[]

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false || value === true) return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

/** `html\`<p title="${title}">${text}</p>\`` — strings are escaped, SafeHtml (and lists of it) kept. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return new SafeHtml(out)
}

/**
 * Markup that does not come from `html` but is trusted as it is: the output of the
 * notation renderer (which escapes first), an SVG chart drawn from numbers, a script of
 * the page's own. Never a value a user or a client chose.
 */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup)
}

/** Markup items joined by `separator` (markup too). */
export function joinHtml(items: readonly Interpolation[], separator: SafeHtml | string): SafeHtml {
  const sep = typeof separator === 'string' ? escapeHtml(separator) : separator.value
  return new SafeHtml(items.map(render).join(sep))
}

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** An instant as people read it: "27 Nov 2026, 02:10 UTC" (dateOnly: "27 Nov 2026"). */
export function readableTime(at: number | Date, dateOnly = false): string {
  const d = new Date(at)
  const day = `${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()}`
  if (dateOnly) return day
  return `${day}, ${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')} UTC`
}

/**
 * Every instant a page shows: `<time datetime="2026-11-27T02:10:53Z" title="…">27 Nov 2026,
 * 02:10 UTC</time>`, or the date alone (`dateOnly`). `local` marks it for the migration
 * page's script, which rewrites it in the reader's time zone.
 */
export function timeHtml(at: number | Date, options: { dateOnly?: boolean; local?: boolean } = {}): SafeHtml {
  const iso = isoSeconds(at)
  return html`<time datetime="${iso}" title="${iso}"${options.local ? trusted(' data-local="datetime"') : ''}>${readableTime(at, options.dateOnly)}</time>`
}

// An instant as a message writes it (time.ts: `2027-07-01`, `2027-07-01 00:00 UTC`).
const writtenDate = /\d{4}-\d\d-\d\d(?: \d\d:\d\d UTC)?/g

/**
 * Text with each date it writes (`2027-07-01 00:00 UTC`) held on one line (the stylesheet's
 * `.date`): a browser otherwise breaks a line after a date's hyphen, at 390 px often.
 */
export function datesHtml(text: string): SafeHtml {
  let out = ''
  let from = 0
  for (const m of text.matchAll(writtenDate)) {
    out += escapeHtml(text.slice(from, m.index)) + `<span class="date">${escapeHtml(m[0])}</span>`
    from = m.index + m[0].length
  }
  return new SafeHtml(out + escapeHtml(text.slice(from)))
}
