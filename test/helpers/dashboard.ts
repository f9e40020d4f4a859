// The operator dashboard as a browser uses it: the sign-in form's post, and the session
// cookie it answers with (docs/security.md#operator-sessions).
import { expect } from 'vitest'
import type { Stack } from './stack.js'

export const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' }

/** Signs in with the admin token (or `token`); the `Cookie` header value of the session. */
export async function dashboardSignIn(stack: Stack, token = stack.config.adminToken): Promise<string> {
  const res = await fetch(`${stack.adminUrl}/admin/login`, { method: 'POST', headers: formHeaders, body: new URLSearchParams({ token }), redirect: 'manual' })
  await res.arrayBuffer()
  expect(res.status).toBe(303)
  return /^(kigo_admin_session=[^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!
}
