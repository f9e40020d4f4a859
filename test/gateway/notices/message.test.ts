// The notice's wording (src/gateway/notices/message.ts): the built-in text and HTML, and
// an operator's templates replacing them, with what a client chose escaped in the HTML.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadTemplates, renderNotice, TemplateError, type NoticeInput } from '../../../src/gateway/notices/message.js'
import { normalizePolicy } from '../../../src/gateway/policy/normalize.js'
import { defaultPolicies } from '../../../src/gateway/policy/types.js'

const now = Date.parse('2030-03-01T08:00:00Z')
const policies = { ...defaultPolicies(), basic: normalizePolicy('basic', { state: 'deprecate', schedule: [{ state: 'deny', from: '2030-04-01T00:00:00Z' }] }, now) }
const input: NoticeInput = {
  recipient: { id: 'alice', name: 'Alice <A>' },
  baseUrl: 'https://kigo.example',
  methods: [{ method: 'basic', steps: ['announced'], clients: [{ client: 'Evil<script>/1.0', requests: 1, lastSeen: now - 3_600_000, user: 'alice' }] }],
  policies,
  now,
}
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

describe('renderNotice', () => {
  it('says per client the requests, last seen, the end in policyOutlook\'s words, what to do and the links', () => {
    const m = renderNotice(input)
    expect(m.subject).toBe('HTTP Basic authentication is being retired: your clients need to move')
    expect(m.text).toContain('Evil<script>/1.0: 1 request, last seen 2030-03-01 07:00 UTC.')
    expect(m.text).toContain('Works, but is deprecated. It stops working on 2030-04-01 00:00 UTC.')
    expect(m.text).toContain('What to do: Update each client below')
    expect(m.text).toContain('Migration guide: https://kigo.example/migration')
    expect(m.text).toContain('https://kigo.example/account')
    // The HTML alternative escapes what the client and the user chose.
    expect(m.html).toContain('Evil&lt;script&gt;/1.0')
    expect(m.html).toContain('Hello Alice &lt;A&gt;,')
    expect(m.html).not.toContain('<script>')
  })

  it('an operator\'s templates replace the wording; placeholders are filled, escaped in the HTML', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kigo-templates-'))
    dirs.push(dir)
    writeFileSync(join(dir, 'subject.txt'), 'Action needed for {{user}}\n')
    writeFileSync(join(dir, 'text.txt'), 'Dear {{name}},\n{{clients}}\nSee {{migration_url}} and {{account_url}}. {{unknown}}\n')
    writeFileSync(join(dir, 'html.html'), '<p>Dear {{name}}</p><pre>{{clients}}</pre>')
    const m = renderNotice(input, loadTemplates(dir))
    expect(m.subject).toBe('Action needed for alice')
    expect(m.text).toMatch(/^Dear Alice <A>,\nHTTP Basic authentication is being retired\.\n {2}- Evil<script>\/1\.0: 1 request/)
    expect(m.text).toContain('See https://kigo.example/migration and https://kigo.example/account. {{unknown}}')
    expect(m.html).toContain('<p>Dear Alice &lt;A&gt;</p><pre>HTTP Basic authentication is being retired.')
    expect(m.html).not.toContain('<script>')
  })

  it('a template directory holding none of the templates is refused, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kigo-templates-'))
    dirs.push(dir)
    expect(() => loadTemplates(dir)).toThrow(TemplateError)
    expect(() => loadTemplates(dir)).toThrow(dir)
  })
})
