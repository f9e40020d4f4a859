// The entry notation rendered as HTML (docs/api.md#callback-and-body_formats). The body is split into tokens (URLs,
// keyword links, user links, newlines) and every piece of text is HTML-escaped on output,
// which is the same as escaping everything first: nothing in a body can produce markup of
// its own. Only http and https URLs ever become links.
import escapeHtml from 'escape-html'
import { encodeSegment, keywordPageUrl } from './urls.js'

export type HtmlVariant = 'html' | 'html_touch' | 'html_mobile'

export interface NotationContext {
  /** `{scheme}://{domain}` of the entry's deployment: where user and keyword pages live. */
  baseUrl: string
  /** Photo URLs of this service (their path ends with an image extension too). */
  isPhotoUrl(url: string): boolean
}

/** The class that limits an image's width in `html_touch`. */
export const touchImageClass = 'kigo-touch-image'

// URL characters per RFC 3986 §2 minus the brackets (which the keyword notation uses);
// quotes, angle brackets, spaces and non-ASCII end a URL.
const token = new RegExp(
  [
    String.raw`(?<url>[hH][tT][tT][pP][sS]?://[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]+)`,
    String.raw`\[\[(?<bracket>[^\[\]\r\n]+)\]\]`,
    String.raw`\[keyword:(?<keyword>[^\[\]\r\n]+)\]`,
    String.raw`(?<![A-Za-z0-9_\-:])id:(?<user>[A-Za-z][A-Za-z0-9_-]{2,31})(?![A-Za-z0-9_-])`,
    String.raw`(?<newline>\r\n|\r|\n)`,
  ].join('|'),
  'g',
)

const imagePath = /\.(jpe?g|png|gif|webp)$/i

const sentencePunctuation = new Set(['.', ',', ';', ':', '!', '?', "'"])

/**
 * Punctuation that ends a sentence rather than a URL ("see http://a.example/x."): trailing
 * sentence punctuation, and a trailing `)` that closes nothing inside the URL
 * ("(see http://a.example/x)") while a balanced one stays ("http://a.example/Foo_(bar)").
 * One pass to count the parentheses, one walk back from the end: linear in the URL's
 * length, whatever the URL holds (a URL of 10,000 `)` costs what one of 10,000 letters does).
 */
function splitTrailing(url: string): [string, string] {
  let opens = 0
  let closes = 0
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i)
    if (c === 0x28) opens += 1
    else if (c === 0x29) closes += 1
  }
  let end = url.length
  while (end > 0) {
    const c = url[end - 1]!
    if (sentencePunctuation.has(c)) {
      end -= 1
    } else if (c === ')' && opens < closes) {
      closes -= 1
      end -= 1
    } else {
      break
    }
  }
  return [url.slice(0, end), url.slice(end)]
}

function httpUrl(text: string): URL | null {
  try {
    const u = new URL(text)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' ? u : null
  } catch {
    return null
  }
}

function renderUrl(url: string, variant: HtmlVariant, ctx: NotationContext): string {
  const href = escapeHtml(url)
  const parsed = httpUrl(url)
  if (!parsed) return href
  const image = ctx.isPhotoUrl(url) || imagePath.test(parsed.pathname)
  if (image && variant !== 'html_mobile') {
    const cls = variant === 'html_touch' ? ` class="${touchImageClass}"` : ''
    return `<a href="${href}" rel="nofollow"><img src="${href}"${cls} alt=""></a>`
  }
  return `<a href="${href}" rel="nofollow">${href}</a>`
}

/** The body as HTML in one of the three variants. */
export function renderNotation(body: string, variant: HtmlVariant, ctx: NotationContext): string {
  let out = ''
  let last = 0
  for (const m of body.matchAll(token)) {
    const g = m.groups!
    out += escapeHtml(body.slice(last, m.index))
    last = m.index + m[0].length
    if (g.url !== undefined) {
      const [url, trailing] = splitTrailing(g.url)
      out += renderUrl(url, variant, ctx) + escapeHtml(trailing)
    } else if (g.bracket !== undefined || g.keyword !== undefined) {
      const word = (g.bracket ?? g.keyword)!
      out += `<a href="${escapeHtml(keywordPageUrl(ctx.baseUrl, word))}">${escapeHtml(word)}</a>`
    } else if (g.user !== undefined) {
      out += `<a href="${escapeHtml(`${ctx.baseUrl}/${encodeSegment(g.user)}/`)}">id:${escapeHtml(g.user)}</a>`
    } else {
      out += '<br>'
    }
  }
  return out + escapeHtml(body.slice(last))
}
