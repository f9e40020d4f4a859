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
    // The list is above the advice: it speaks of "these tools", never of a list "below".
    expect(m.text).toContain('What to do: Update each of these tools to a version that signs in with OAuth')
    expect(m.text).not.toContain('below')
    // The account holder's own page and account first; the developers' guide only for who writes the tool.
    expect(m.text).toContain('How to move your tools: https://kigo.example/account/moving\nYour account (the same list, kept up to date): https://kigo.example/account\nIf you write the tool yourself, the developer guide: https://kigo.example/migration\n')
    expect(m.html).toContain('<a href="https://kigo.example/account/moving">How to move your tools</a>')
    // The HTML alternative escapes what the client and the user chose.
    expect(m.html).toContain('Evil&lt;script&gt;/1.0')
    expect(m.html).toContain('Hello Alice &lt;A&gt;,')
    expect(m.html).not.toContain('<script>')
  })

  it('sends an OAuth 1.0a application\'s owner to the exchange step of the migration page, in the text and the HTML; other methods have no such link', () => {
    const oauth1 = { ...policies, oauth1: normalizePolicy('oauth1', { state: 'deprecate', schedule: [{ state: 'deny', from: '2030-04-01T00:00:00Z' }] }, now) }
    const m = renderNotice({ ...input, policies: oauth1, methods: [{ method: 'oauth1', steps: ['announced'], clients: [{ client: 'Poster', application: 'ck1', users: 2, requests: 4, lastSeen: now - 3_600_000, user: 'alice' }] }] })
    expect(m.text).toContain('  How to exchange the tokens, step by step: https://kigo.example/migration#oauth2-exchange\n')
    expect(m.html).toContain('<a href="https://kigo.example/migration#oauth2-exchange">How to exchange the tokens, step by step</a>')
    expect(renderNotice(input).text).not.toContain('#oauth2-exchange')
  })

  it('a brownout reminder says a brownout starts; a deny reminder that it stops working', () => {
    const brownout = { ...policies, basic: normalizePolicy('basic', { state: 'deprecate', windows: [{ start: '09:00', end: '12:00' }], schedule: [{ state: 'brownout', from: '2030-03-05T00:00:00Z' }, { state: 'deny', from: '2030-04-01T00:00:00Z' }] }, now) }
    const reminded = (refusal: 'brownout' | 'deny', p = policies) => renderNotice({ ...input, policies: p, methods: [{ ...input.methods[0]!, steps: ['reminder_7d'], refusal }] })
    expect(reminded('brownout', brownout).subject).toBe('HTTP Basic authentication starts being refused at set hours of the day (brownouts) in a week or less: your clients need to move')
    expect(reminded('deny').subject).toBe('HTTP Basic authentication stops working in a week or less: your clients need to move')
    const moved = renderNotice({ ...input, methods: [{ ...input.methods[0]!, steps: ['date_moved'], refusal: 'deny' }] })
    expect(moved.subject).toBe('HTTP Basic authentication stops working earlier than we told you: your clients need to move')
  })

  it('the retired mail says the method has been switched off, not that it is being retired', () => {
    const denied = { ...policies, basic: normalizePolicy('basic', { state: 'deny' }, now - 86_400_000) }
    const m = renderNotice({ ...input, policies: denied, methods: [{ ...input.methods[0]!, steps: ['retired'], refusal: null }] })
    expect(m.subject).toBe('HTTP Basic authentication has been switched off: your clients need to move')
    expect(m.text).toContain('Some of the tools you use with your account sign in with a method that has been switched off.')
    expect(m.text).not.toContain('being retired')
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
