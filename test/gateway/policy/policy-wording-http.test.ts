// Every surface tells a legacy method's fate in the same words, and none contradicts the
// answer a request gets: the response headers, /migration, the account page's legacy
// panel, `kigo policy show` and the operator dashboard. The case people met: WSSE
// deprecated with a sunset in 2027, then denied: the 403 named the 2027 sunset, the
// pages showed "Now: deny" beside it, and the account page called it a planned end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { policyOutlook } from '../../../src/gateway/policy/outlook.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient } from '../provider/helpers.js'
import { form, wsseHeader } from './signers.js'

let stack: Stack
let carol: { password: string; api_password: string }

// A date's <span class="date"> only keeps it on one line: it is not part of the words.
const decode = (html: string) => html.replace(/<span class="date">([^<]*)<\/span>/g, '$1').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

async function cli(...args: string[]): Promise<string> {
  let stdout = ''
  const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => undefined } })
  expect(code).toBe(0)
  return stdout
}

const viaWsse = () => fetch(`${stack.url}/api/statuses/update.json`, {
  method: 'POST',
  headers: { ...form, ...wsseHeader('carol', carol.api_password, Date.now()), 'user-agent': 'OldWsseTool/1.0' },
  body: 'status=still%20on%20WSSE',
})

beforeAll(async () => {
  stack = await startStack({ overrides: { migration: { usageFlushMs: 100, policyRefreshMs: 100 } } })
  carol = await stack.addUser('carol', 'Carol')
  await cli('policy', 'set', 'wsse', 'deprecate', '--sunset', '2037-06-30T00:00:00Z')
  const deprecated = await viaWsse()
  expect(deprecated.status).toBe(200)
  expect(deprecated.headers.get('sunset')).toBe('Tue, 30 Jun 2037 00:00:00 GMT')
  await new Promise((r) => setTimeout(r, 400)) // one usage flush
  await cli('policy', 'set', 'wsse', 'deny')
})

afterAll(async () => {
  await stack?.close()
})

describe('WSSE deprecated with a sunset, then denied', () => {
  let summary: string

  it('the policy says it ended when it was denied, with no future end', async () => {
    const view = (await stack.admin<any>('GET', '/admin/policy')).body.wsse
    expect(view.sunset).toBe('2037-06-30T00:00:00Z')
    expect(view.effective.ends_at).toBeNull()
    expect(view.effective.ended_at).toBe(view.since)
    summary = view.effective.summary
    expect(summary).toMatch(/^Refused: switched off since \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/)
    expect(summary).toBe(policyOutlook(view, Date.now()).summary)
  })

  it('the refusal carries no Sunset', async () => {
    const res = await viaWsse()
    expect(res.status).toBe(403)
    expect(res.headers.get('sunset')).toBeNull()
    expect((await res.json()).error.code).toBe('method_retired')
  })

  it('/migration shows the same words and when it ended', async () => {
    const text = decode(await (await fetch(`${stack.url}/migration`)).text())
    const section = /<section class="card policy" id="policy-wsse"[\s\S]*?<\/section>/.exec(text)![0]
    expect(section).toContain(`<p class="outlook">${summary}</p>`)
    expect(section).toMatch(/<dt>Sunset<\/dt><dd>ended <time/)
    expect(section).not.toContain('2037')
  })

  it('the account page tells carol the same of her WSSE tool', async () => {
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', 'carol', carol.password)).status).toBe(303)
    const text = decode((await web.get('/account')).text)
    expect(text).toContain('OldWsseTool/1.0')
    expect(text).toContain(summary)
    expect(text).not.toContain('Planned end')
    expect(text).not.toContain('2037')
  })

  it('kigo policy show and the dashboard tell the operator the same', async () => {
    const shown = await cli('policy', 'show')
    expect(shown).toContain(`wsse: deny now (refusing every request)\n  clients are told: ${summary}\n`)
    expect(shown).not.toContain('sunset 2037')
    const dashboard = decode(await (await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })).text())
    const row = /<tr data-method="wsse">[\s\S]*?<\/tr>/.exec(dashboard)![0]
    expect(row).toContain(`<p class="outlook">${summary}</p>`)
    expect(row).toMatch(/data-label="Sunset">ended <time/)
  })
})
