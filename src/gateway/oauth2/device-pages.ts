// The device flow's pages (RFC 8628 §3.3) at {base_url}/device, in the account area's
// layout: the user types the code their device shows, confirms it is theirs, then signs in
// and consents on the account area's own pages (the provider's interactions). Plain HTML
// that works on a phone: one field, big buttons, no script.
import { html, trusted } from '../../common/html.js'
import { page } from '../account-area/html.js'

interface DevicePageContext {
  oidc: { client?: { clientId: string; clientName?: string } }
}

/** A library error on the code page, as the user should read it. */
function codeError(err: unknown): string | null {
  if (!err) return null
  const name = (err as { name?: string; userCode?: string }).name
  if ((err as { userCode?: string }).userCode !== undefined || name === 'NoCodeError' || name === 'NotFoundError') return 'That code is not right. Check it on your device and type it again.'
  if (name === 'ExpiredError') return 'That code has expired. Start again on your device to get a new one.'
  if (name === 'AlreadyUsedError') return 'That code was already used. Start again on your device to get a new one.'
  if (name === 'AbortedError') return 'You cancelled. Nothing was connected to your account.'
  return 'kigo could not check the code. Try again.'
}

/** The library's own form, without its inline event handler (the pages allow no script). */
const withoutHandlers = (form: string) => form.replace(/\son[a-z]+="[^"]*"/g, '')

export function codeInputPage(form: string, err?: unknown): string {
  const problem = codeError(err)
  return page({
    title: 'Connect a device',
    narrow: true,
    body: html`<div class="card">
<h1>Connect a device to your kigo account</h1>
${problem ? html`<p class="error" role="alert">${problem}</p>` : html`<p>Type the code your device or program shows.</p>`}
${trusted(withoutHandlers(form).replace('name="user_code"', 'name="user_code" aria-label="Code" autocapitalize="characters" spellcheck="false"'))}
<div class="actions"><button type="submit" form="op.deviceInputForm">Continue</button></div>
</div>`,
  })
}

export function codeConfirmPage(ctx: DevicePageContext, form: string, userCode: string): string {
  const client = ctx.oidc.client
  const name = client ? (client.clientName ?? client.clientId) : 'A program'
  return page({
    title: 'Connect a device',
    narrow: true,
    body: html`<div class="card">
<h1>Connect <strong>${name}</strong>?</h1>
<p>Check that your device shows this code:</p>
<p class="user-code"><code>${userCode}</code></p>
<p class="muted">If you did not start this on a device of yours, or the code is not the same, cancel.</p>
${trusted(form)}
<div class="actions">
<button autofocus type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" value="yes" name="abort" class="secondary">Cancel</button>
</div>
</div>`,
  })
}

export function deviceDonePage(ctx: DevicePageContext): string {
  const client = ctx.oidc.client
  const name = client ? (client.clientName ?? client.clientId) : 'The program'
  return page({
    title: 'Device connected',
    narrow: true,
    body: html`<div class="card"><h1>Done</h1><p>${name} is connected to your kigo account. You can close this page and go back to your device.</p><p class="muted">You can revoke its access at any time on <a href="/account">your account page</a>.</p></div>`,
  })
}
