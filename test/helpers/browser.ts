// Debian's Chromium through playwright-core for the browser tests: never a downloaded
// browser. Without /usr/bin/chromium the suites are skipped with a printed reason, except
// under CI=true, where a missing browser fails the run.
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { projectRoot } from '../../src/common/config.js'
import { inCi } from './services.js'

export const chromiumPath = '/usr/bin/chromium'

/** Whether Chromium is installed; when not, warns that `suite` is skipped (or throws under CI). */
export function chromiumAvailable(suite: string): boolean {
  if (existsSync(chromiumPath)) return true
  const reason = `${chromiumPath} is missing (apt-get install -y chromium)`
  if (inCi) throw new Error(`${reason}; under CI=true the browser tests must run`)
  console.warn(`skipping ${suite}: ${reason}`)
  return false
}

/** Headless, and without the background traffic that would make a test wait or flake. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

/** One Chromium for the enclosing suite: launched before its tests, closed after them. */
export function suiteBrowser(): () => Browser {
  let browser: Browser | undefined
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })
  return () => {
    if (!browser) throw new Error('Chromium is not running (suiteBrowser hooks not run yet)')
    return browser
  }
}

/** test-artifacts/screenshots/, created. */
export function screenshotDir(): string {
  const dir = join(projectRoot, 'test-artifacts', 'screenshots')
  mkdirSync(dir, { recursive: true })
  return dir
}
