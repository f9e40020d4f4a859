// The consent pages' line about who asks (docs/gateway.md#who-asks-on-the-consent-pages),
// as the person deciding reads it: the owner, the people using it in words, and the home
// page shown by the host it leads to.
import { expect, it } from 'vitest'
import { registrantLine } from '../../../src/gateway/account-area/registrant.js'

const text = (markup: string) => markup.replace(/<[^>]+>/g, '')

it('says how many people use it, in words', () => {
  expect(text(registrantLine({ owner: 'alice', users: 0, homeUrl: null }).value)).toBe('Registered by alice · nobody uses it yet')
  expect(text(registrantLine({ owner: 'alice', users: 1, homeUrl: null }).value)).toBe('Registered by alice · used by 1 person')
  expect(text(registrantLine({ owner: 'alice', users: 12, homeUrl: null }).value)).toBe('Registered by alice · used by 12 people')
  expect(text(registrantLine({ owner: 'alice', users: 12345, homeUrl: null }).value)).toBe('Registered by alice · used by 12,345 people')
  // Where nothing is counted (the login API), only the owner.
  expect(text(registrantLine({ owner: 'alice', homeUrl: null }).value)).toBe('Registered by alice')
})

it('links the home page by the host it leads to, telling it nothing and vouching for nothing', () => {
  const line = registrantLine({ owner: 'alice', users: 2, homeUrl: 'https://www.example.com:8443/about?x=1&y=2' }).value
  expect(line).toContain('<a href="https://www.example.com:8443/about?x=1&amp;y=2" rel="noopener noreferrer nofollow" target="_blank">www.example.com:8443</a>')
  expect(text(line)).toBe('Registered by alice · used by 2 people · home page www.example.com:8443')
  // A host in another script is shown as the browser will reach it (no look-alike letters).
  expect(text(registrantLine({ owner: 'alice', homeUrl: 'https://ex\u0430mple.com/' }).value)).toMatch(/^Registered by alice · home page xn--[a-z0-9-]+\.com$/)
})

it('escapes what the owner chose', () => {
  const line = registrantLine({ owner: 'a<b>', users: 0, homeUrl: 'https://x.example/"><script>' }).value
  expect(line).not.toContain('<script>')
  expect(line).not.toContain('<b>')
})
