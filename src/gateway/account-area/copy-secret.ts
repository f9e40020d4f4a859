// The copy buttons beside a secret shown once (docs/gateway.md#rotating-a-secret), a
// consumer secret, a login site's secret, an OpenID Connect client secret, and beside
// the key that goes with it (consumer key, api_key, client_id). The button is
// in the markup but hidden; a small script of ours, allowed by its hash in the page's CSP
// (nothing else runs), shows it where the browser offers the Clipboard API and copies the
// secret's text on a click. Without script, or without a clipboard (a page not served over
// https), the button stays hidden and the secret is selected and copied by hand as before.
import { createHash } from 'node:crypto'
import { html, type SafeHtml } from '../../common/html.js'

/** The script, exactly as the page carries it (its hash is computed from this text). */
export const copySecretScript = `
for (const button of document.querySelectorAll('button[data-copy]')) {
  const secret = document.getElementById(button.dataset.copy);
  if (!secret || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', () => {
    navigator.clipboard.writeText(secret.textContent).then(
      () => { button.textContent = 'Copied'; },
      () => { button.textContent = 'Not copied: select the secret and copy it'; },
    );
  });
}
`

/** The CSP source that allows the script and nothing else. */
export const copySecretScriptHash = `'sha256-${createHash('sha256').update(copySecretScript).digest('base64')}'`

/** The (hidden until the script shows it) button that copies the text of the element `id`; `label` names what it copies, for a screen reader. */
export function copyButton(id: string, label: string): SafeHtml {
  return html`<button type="button" class="secondary copy" data-copy="${id}" aria-label="${label}" hidden>Copy</button>`
}
