// Who stands behind what asks for a person's consent (an OAuth application, a login site,
// an OpenID Connect client), as its consent page tells that person
// (docs/gateway.md#who-asks-on-the-consent-pages): the kigo user who registered it, how
// many people use it now, and its home page, shown by its host name so that the reader
// sees where the link goes before following it.
import { html, type SafeHtml } from '../../common/html.js'

export interface Registrant {
  /** The user ID of whoever registered it (an ID is unique; a display name is not). */
  owner: string
  /** How many people use it now; absent where nothing lasting is given to count (the login API). */
  users?: number
  /** Its home page as registered, or null. */
  homeUrl: string | null
}

const peopleText = (n: number): string => (n === 0 ? 'nobody uses it yet' : n === 1 ? 'used by 1 person' : `used by ${n.toLocaleString('en-US')} people`)

/** The host a URL leads to (with its port, if any), or null for a value that is not a URL. */
function hostOf(url: string | null): string | null {
  if (url === null) return null
  try {
    return new URL(url).host || null
  } catch {
    return null
  }
}

/** "Registered by alice · used by 12 people · home page example.com", one line under the consent page's heading. */
export function registrantLine(r: Registrant): SafeHtml {
  const host = hostOf(r.homeUrl)
  const parts: SafeHtml[] = [html`Registered by <strong>${r.owner}</strong>`]
  if (r.users !== undefined) parts.push(html`${peopleText(r.users)}`)
  // Opened beside the consent page (which stays to be answered), telling the page nothing
  // about where the visitor came from, and vouched for by nobody (nofollow).
  if (host !== null) parts.push(html`home page <a href="${r.homeUrl}" rel="noopener noreferrer nofollow" target="_blank">${host}</a>`)
  return html`<p class="muted" id="registrant">${parts.map((p, i) => (i === 0 ? p : html` · ${p}`))}</p>`
}
