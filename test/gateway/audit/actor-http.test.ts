// The audit trail names who made each change (docs/operations.md#the-audit-trail): a user's
// own change on the account pages names that user, the operator's names the operator,
// each with the address it came from; in the operator API, the dashboard and `kigo audit`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, codeOf, csrfOf } from '../provider/helpers.js'

let stack: Stack
let alice: { id: string; password: string }

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice')
}, 120_000)

afterAll(async () => {
  await stack?.close()
})

async function kigo(...args: string[]) {
  let stdout = ''
  const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, { stdout: { write: (s: string) => void (stdout += s) }, stderr: { write: () => undefined } })
  return { code, stdout }
}

describe('the actor of an audited change', () => {
  it('alice creating and deleting a login site on /account is named as alice everywhere; the operator’s change as the operator', async () => {
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', alice.id, alice.password)).status).toBe(303)
    const form = await web.get('/account/sites')
    const created = await web.postAndFollow('/account/sites', { csrf_token: csrfOf(form.text), name: 'Tea Party', callback: 'https://tea.example/cb' })
    expect(created.posted).toBe(303)
    expect(created.status).toBe(200)
    const apiKey = codeOf(created.text, 'api_key')!
    const deleted = await web.post(`/account/sites/${apiKey}/delete`, { csrf_token: csrfOf(created.text), confirm: 'yes' })
    expect(deleted.status).toBe(303)
    // The operator's own change, for contrast.
    expect((await stack.admin('POST', '/admin/users', { id: 'bob' })).status).toBe(201)

    const api = await stack.admin<{ events: Array<{ action: string; target: string; by: string; address: string }> }>('GET', `/admin/audit?target=${apiKey}`)
    expect(api.body.events.map((e) => [e.action, e.by])).toEqual([['site.delete', 'user alice'], ['site.create', 'user alice']])
    expect(api.body.events[0]!.address).toBe('127.0.0.1')
    const bob = await stack.admin<{ events: Array<{ action: string; by: string }> }>('GET', '/admin/audit?target=bob')
    expect(bob.body.events.map((e) => [e.action, e.by])).toEqual([['user.create', 'operator']])

    const dashboard = await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    expect(dashboard.status).toBe(200)
    const rows = [...(await dashboard.text()).matchAll(/<tr><td data-label="When">.*?<\/tr>/gs)].map((m) => m[0])
    const siteRows = rows.filter((r) => r.includes(apiKey))
    expect(siteRows).toHaveLength(2)
    for (const row of siteRows) expect(row).toContain('<td data-label="By">user alice (from 127.0.0.1)</td>')
    expect(rows.find((r) => r.includes('<code>bob</code>'))).toContain('<td data-label="By">operator (from 127.0.0.1)</td>')

    const cli = await kigo('audit', '--target', apiKey)
    expect(cli.code).toBe(0)
    const [header, ...lines] = cli.stdout.trim().split('\n')
    expect(header).toMatch(/^AT\s+BY\s+ADDRESS\s+ACTION\s+TARGET\s+CHANGE$/)
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(line).toMatch(/\buser alice\s+127\.0\.0\.1\s+site\.(create|delete)\b/)
    expect((await kigo('audit', '--target', 'bob')).stdout).toMatch(/\boperator\s+127\.0\.0\.1\s+user\.create\b/)
  })
})
