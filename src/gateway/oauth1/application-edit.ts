// The owner's edit of an OAuth application (docs/gateway.md#editing-what-one-registered): its
// name, callback URL and home page, on the application's page; a refused value comes
// back on a page of its own with what was typed and why (the secret is not shown there).
import type { Consumer, User } from '../store/types.js'
import { html, page, type SafeHtml } from '../account-area/html.js'
import { currentPasswordField } from '../account-area/proof.js'

// Not account-area/pages.ts's: application-page.ts shows this section.
const csrfField = (token: string) => html`<input type="hidden" name="csrf_token" value="${token}">`

/** The edit form's fields as typed (or as stored, when nothing was posted yet), with the refusal if any. */
export interface ApplicationEditForm {
  name: string
  callback: string
  home: string
  error?: string
}

/** The form as the stored application fills it. */
export const applicationEditFormOf = (c: Consumer): ApplicationEditForm => ({ name: c.name, callback: c.callbackUrl ?? '', home: c.homeUrl ?? '' })

/** The application page's section that edits it. */
/** `askPassword`: the session's sign-in is not recent, so changing the callback needs the current password. */
export function applicationEditSection(o: { csrfToken: string; consumer: Consumer; askPassword: boolean; form?: ApplicationEditForm }): SafeHtml {
  const f = o.form ?? applicationEditFormOf(o.consumer)
  return html`<section class="card" id="edit">
<h2>Name, callback and home page</h2>
${f.error ? html`<div class="error" role="alert">${f.error}</div>` : ''}
<form method="post" action="/account/apps/${o.consumer.key}/edit">
${csrfField(o.csrfToken)}
<label for="edit_name">Name <span class="muted">(shown to people when they authorize the application)</span></label>
<input type="text" id="edit_name" name="name" value="${f.name}" maxlength="100" required>
<label for="edit_callback">Callback URL <span class="muted">(optional; leave empty to accept any callback or “oob”)</span></label>
<input type="url" id="edit_callback" name="callback" value="${f.callback}" placeholder="https://example.com/oauth/callback">
<label for="edit_home">Home page <span class="muted">(optional; linked on the page where people authorize the application)</span></label>
<input type="url" id="edit_home" name="home_url" value="${f.home}" placeholder="https://example.com/">
${currentPasswordField({ id: 'edit_current_password', what: 'callback URL', needed: o.askPassword })}
<div class="actions"><button type="submit" class="secondary">Save changes</button></div>
</form>
<p class="muted">Changes apply at once. The scopes stay as registered, and people who authorized the application keep their access.</p>
</section>`
}

/** A refused edit: the form again, with what was typed and why, and nothing changed. */
export function applicationEditPage(o: { user: User; csrfToken: string; consumer: Consumer; askPassword: boolean; form: ApplicationEditForm }): string {
  return page({
    title: `Edit ${o.consumer.name}`,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<p><a href="/account/apps/${o.consumer.key}">← ${o.consumer.name}</a></p>
<h1>Edit ${o.consumer.name}</h1>
${applicationEditSection({ csrfToken: o.csrfToken, consumer: o.consumer, askPassword: o.askPassword, form: o.form })}`,
  })
}
