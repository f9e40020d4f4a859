// Configuration (docs/operations.md#configuration): defaults, environment overrides, and one clear line naming
// a bad setting, both from loadConfig and from the process that refuses to start.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/common/config.js'
import { dataDirSecrets } from '../../src/common/secrets.js'

const key = randomBytes(32).toString('base64')
const base = { KIGO_SECRET_KEY: key, KIGO_ADMIN_TOKEN: 'a'.repeat(24) }

describe('loadConfig', () => {
  it('reads the optional metrics token from KIGO_METRICS_TOKEN; unset by default', () => {
    expect(loadConfig({ env: base }).metricsToken).toBeUndefined()
    expect(loadConfig({ env: { ...base, KIGO_METRICS_TOKEN: 'm'.repeat(20) } }).metricsToken).toBe('m'.repeat(20))
  })

  it('applies the defaults of docs/operations.md#configuration', () => {
    const c = loadConfig({ env: base })
    expect(c.dataDir).toBe('./data')
    expect(c.gateway.port).toBe(8080)
    expect(c.core.port).toBe(8081)
    expect(c.gateway.adminPort).toBe(9090)
    expect(c.gateway.adminHost).toBe('127.0.0.1')
    expect(c.gateway.coreUrl).toBe('http://127.0.0.1:8081')
    expect(c.domesticHost).toBe('localhost:8080')
    expect(c.globalHost).toBe('127.0.0.1:8080')
    expect(c.publicScheme).toBe('http')
    expect(c.trustedProxies).toEqual([])
    expect(c.logLevel).toBe('info')
    expect(c.databaseUrl).toBeUndefined()
    expect(c.redisUrl).toBeUndefined()
  })

  it('takes every environment override', () => {
    const c = loadConfig({
      env: {
        ...base,
        KIGO_DATA_DIR: '/tmp/x',
        DATABASE_URL: 'postgres://u@h/db',
        REDIS_URL: 'redis://h:6379',
        KIGO_GATEWAY_PORT: '18080',
        KIGO_CORE_PORT: '18081',
        KIGO_ADMIN_PORT: '19090',
        KIGO_CORE_URL: 'http://core:1',
        KIGO_DOMESTIC_HOST: 'kigo.example',
        KIGO_GLOBAL_HOST: 'global.kigo.example:8443',
        KIGO_PUBLIC_SCHEME: 'https',
        KIGO_TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16',
        LOG_LEVEL: 'warn',
      },
    })
    expect(c).toMatchObject({
      dataDir: '/tmp/x',
      databaseUrl: 'postgres://u@h/db',
      redisUrl: 'redis://h:6379',
      domesticHost: 'kigo.example',
      globalHost: 'global.kigo.example:8443',
      publicScheme: 'https',
      trustedProxies: ['10.0.0.1', '192.168.0.0/16'],
      logLevel: 'warn',
      gateway: { port: 18080, adminPort: 19090, coreUrl: 'http://core:1' },
      core: { port: 18081 },
    })
  })

  it('derives the default hosts from the gateway port', () => {
    const c = loadConfig({ env: { ...base, KIGO_GATEWAY_PORT: '3000' } })
    expect(c.domesticHost).toBe('localhost:3000')
    expect(c.globalHost).toBe('127.0.0.1:3000')
  })

  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ KIGO_CORE_PORT: 'abc' }, /^KIGO_CORE_PORT: /],
    [{ KIGO_GATEWAY_PORT: '70000' }, /^KIGO_GATEWAY_PORT: /],
    [{ KIGO_PUBLIC_SCHEME: 'ftp' }, /^KIGO_PUBLIC_SCHEME: /],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: /],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: /],
    [{ REDIS_URL: 'http://x' }, /^REDIS_URL: /],
    [{ KIGO_SECRET_KEY: 'c2hvcnQ=' }, /^KIGO_SECRET_KEY: must be 32 bytes/],
    [{ KIGO_ADMIN_TOKEN: 'short' }, /^KIGO_ADMIN_TOKEN: /],
    [{ KIGO_METRICS_TOKEN: 'short' }, /^KIGO_METRICS_TOKEN: /],
    [{ KIGO_DOMESTIC_HOST: 'bad host/' }, /^KIGO_DOMESTIC_HOST: /],
  ]
  for (const [env, message] of bad) {
    it(`names the setting when ${Object.keys(env)[0]} is bad`, () => {
      let error: unknown
      try {
        loadConfig({ env: { ...base, ...env } })
      } catch (err) {
        error = err
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as Error).message).toMatch(message)
      expect((error as Error).message).not.toContain('\n')
    })
  }

  it('refuses an auth.routeMethods key that names no operation, listing the operations', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kigo-config-'))
    const file = join(dir, 'kigo.json')
    writeFileSync(file, JSON.stringify({ auth: { routeMethods: { 'statuses/update': ['oauth'], 'statuses/updte': ['oauth'] } } }))
    expect(() => loadConfig({ env: { ...base, KIGO_CONFIG: file } })).toThrow(ConfigError)
    expect(() => loadConfig({ env: { ...base, KIGO_CONFIG: file } })).toThrow(
      /^setting auth\.routeMethods: "statuses\/updte" is not an operation; the operations are statuses\/update, statuses\/show, .*, applications\/my$/,
    )
    writeFileSync(file, JSON.stringify({ auth: { routeMethods: { 'statuses/update': ['oauth'], 'applications/my': ['oauth'] } } }))
    expect(loadConfig({ env: { ...base, KIGO_CONFIG: file } }).auth.routeMethods).toEqual({ 'statuses/update': ['oauth'], 'applications/my': ['oauth'] })
  })

  it('reads a KIGO_CONFIG file between the defaults and the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kigo-config-'))
    const file = join(dir, 'kigo.json')
    writeFileSync(file, JSON.stringify({ core: { limits: { bodyChars: 140 } }, gateway: { port: 1234 } }))
    const c = loadConfig({ env: { ...base, KIGO_CONFIG: file, KIGO_GATEWAY_PORT: '4321' } })
    expect(c.core.limits.bodyChars).toBe(140)
    expect(c.core.limits.keywordChars).toBe(255)
    expect(c.gateway.port).toBe(4321)
  })
})

describe('generated secrets', () => {
  it('are made once, kept with mode 0600, and reused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kigo-secrets-'))
    const first = dataDirSecrets(dir)
    const again = dataDirSecrets(dir)
    expect(again).toEqual(first)
    expect(Buffer.from(first.secretKey, 'base64')).toHaveLength(32)
    expect(statSync(join(dir, 'secret-key')).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, 'admin-token')).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(dir, 'admin-token'), 'utf8').trim()).toBe(first.adminToken)
    const c = loadConfig({ env: { KIGO_DATA_DIR: dir }, secrets: dataDirSecrets })
    expect(c.secretKey).toBe(first.secretKey)
  })
})

describe('start-up with a bad setting', () => {
  it('stops the process with one line naming it and a non-zero exit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kigo-main-'))
    const run = spawnSync(process.execPath, ['dist/src/main.js', 'core'], {
      env: { PATH: process.env.PATH, KIGO_DATA_DIR: dir, KIGO_CORE_PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(run.status).not.toBe(0)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toMatch(/KIGO_CORE_PORT/)
  })

  it('refuses an unknown mode', () => {
    const run = spawnSync(process.execPath, ['dist/src/main.js', 'everything'], { encoding: 'utf8', timeout: 20_000 })
    expect(run.status).toBe(2)
    expect(run.stderr).toMatch(/unknown mode/)
  })
})
