import { expect, test } from 'vitest'
import { baseUrl, deploymentMatcher } from '../../../src/common/deployment.js'
import { parseId } from '../../../src/core/entries/ids.js'

const hosts = { domesticHost: 'Kigo.example:8080', globalHost: 'global.example', publicScheme: 'http' as const }

test('the host must be exactly one of the deployments, case-insensitively (docs/api.md#statusesupdate rule 1)', () => {
  const deploymentOf = deploymentMatcher(hosts)
  expect(deploymentOf('kigo.EXAMPLE:8080')).toBe('domestic')
  expect(deploymentOf('global.example')).toBe('global')
  expect(deploymentOf('global.example:80')).toBe('global')
  expect(deploymentOf('kigo.example')).toBeNull()
  expect(deploymentOf('kigo.example:8081')).toBeNull()
  expect(deploymentOf('evil.example')).toBeNull()
  expect(deploymentOf(undefined)).toBeNull()
  expect(baseUrl(hosts, 'global')).toBe('http://global.example')
})

test('aliases: the first configured name that matches decides, whatever the spelling', () => {
  const withAliases = { ...hosts, domesticAliases: ['www.kigo.example', 'GLOBAL.example'], globalAliases: ['g.example:80', 'www.kigo.example'] }
  const deploymentOf = deploymentMatcher(withAliases)
  expect(deploymentOf(' www.kigo.example ')).toBe('domestic')
  expect(deploymentOf('global.example')).toBe('global')
  expect(deploymentOf('G.EXAMPLE:80')).toBe('global')
  expect(deploymentOf('g.example')).toBe('global')
  expect(deploymentOf('')).toBeNull()
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
