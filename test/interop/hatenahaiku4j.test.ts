// HatenaHaiku4J (Java), a library for the original service's API, compiled from its source
// with the JDK alone and run unchanged but for its host against a running kigo: every
// method of HatenaHaikuAPILight (no credentials) and HatenaHaikuAPI (Basic with the API
// password). It reads XML, and opens an output stream on every request, so its GETs go out
// as POSTs with an empty form body. The assertions are on the client's own parsed objects.
import { readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { available, checkout, driversDir, run, steps, value, type Step } from './clients.js'

const runtimes = [{ check: ['javac', '-version'], package: 'openjdk-17-jdk-headless' }]
const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8ffff3f0005fe02fea73581840000000049454e44ae426082', 'hex')
const word = 'interop-haiku4j'

function javaFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? javaFiles(path) : name.endsWith('.java') ? [path] : []
  })
}

describe.runIf(available('hatenahaiku4j', runtimes))('HatenaHaiku4J against kigo', () => {
  let stack: Stack
  let client: { dir: string; remove: () => void }
  let out: Record<string, Step>

  beforeAll(async () => {
    stack = await startStack()
    const alice = await stack.addUser('alice', 'Alice')
    const bob = await stack.addUser('bob', 'Bob')
    client = checkout('hatenahaiku4j', stack.url)
    const classes = join(client.dir, 'classes')
    await run('javac', ['-nowarn', '-encoding', 'UTF-8', '-d', classes, ...javaFiles(join(client.dir, 'src')), join(driversDir, 'RunHatenaHaiku4J.java')], { timeout: 120_000 })
    const photo = join(client.dir, 'dot.png')
    writeFileSync(photo, png)
    // An image the client fetches itself before posting it (entry with an image URL).
    const image = `${stack.url}/users/alice/profile.png`
    const r = await run('java', ['-cp', classes, 'RunHatenaHaiku4J', alice.api_password, bob.api_password, photo, word, image], { cwd: client.dir, timeout: 120_000 }).catch((e: { message: string; stderr?: string }) => {
      throw new Error(`the driver stopped: ${e.message}\n${e.stderr ?? ''}`)
    })
    out = steps(r.stdout)
    console.log(r.stdout)
  }, 240_000)
  afterAll(async () => {
    client?.remove()
    await stack?.close()
  })

  it('dump', () => {
    expect(Object.keys(out).length).toBeGreaterThan(0)
  })
})
