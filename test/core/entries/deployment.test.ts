import { expect, test } from 'vitest'
import { baseUrl, deploymentMatcher, deploymentOfHost } from '../../../src/core/entries/deployment.js'
import { parseId } from '../../../src/core/entries/ids.js'

const hosts = { domesticHost: 'Kigo.example:8080', globalHost: 'global.example', publicScheme: 'http' as const }

test('the host must be exactly one of the deployments, case-insensitively (SPEC §2.2 rule 1)', () => {
  expect(deploymentOfHost(hosts, 'kigo.EXAMPLE:8080')).toBe('domestic')
  expect(deploymentOfHost(hosts, 'global.example')).toBe('global')
  expect(deploymentOfHost(hosts, 'global.example:80')).toBe('global')
  expect(deploymentOfHost(hosts, 'kigo.example')).toBeNull()
  expect(deploymentOfHost(hosts, 'kigo.example:8081')).toBeNull()
  expect(deploymentOfHost(hosts, 'evil.example')).toBeNull()
  expect(deploymentOfHost(hosts, undefined)).toBeNull()
  expect(baseUrl(hosts, 'global')).toBe('http://global.example')
})

test("the matcher the core's hook uses answers as deploymentOfHost does, aliases included", () => {
  const withAliases = { ...hosts, domesticAliases: ['www.kigo.example', 'GLOBAL.example'], globalAliases: ['g.example:80', 'www.kigo.example'] }
  const spellings = ['kigo.EXAMPLE:8080', 'global.example', 'global.example:80', ' www.kigo.example ', 'g.example', 'G.EXAMPLE:80', 'kigo.example', 'evil.example', '', undefined]
  for (const h of [hosts, withAliases]) {
    const match = deploymentMatcher(h)
    for (const s of spellings) expect(match(s), String(s)).toBe(deploymentOfHost(h, s))
  }
})

test('entry IDs: digits within the bigint range, canonical', () => {
  expect(parseId('42')).toBe('42')
  expect(parseId('0042')).toBe('42')
  expect(parseId('9223372036854775807')).toBe('9223372036854775807')
  expect(parseId('9223372036854775808')).toBeNull()
  expect(parseId('0')).toBeNull()
  expect(parseId('12a')).toBeNull()
  expect(parseId('-1')).toBeNull()
  expect(parseId('')).toBeNull()
})
