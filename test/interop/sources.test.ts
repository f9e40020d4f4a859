// Where a real client's code comes from (test/interop/sources.ts,
// docs/interop.md#where-the-clients-come-from), with real git: a repository served over
// file:// stands in for the public one (a real shallow fetch of one pinned commit), a
// local directory of clones for the mirrors.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientSource, sourceOptions, type SourceOptions } from './sources.js'

let root: string
let pinned: string
let tip: string
const repository = 'someone/client'

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim()

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kigo-sources-'))
  // The client's repository: the pinned commit, then a newer one (the pin is not the tip).
  const work = join(root, 'work')
  mkdirSync(work)
  git(work, 'init', '--quiet')
  writeFileSync(join(work, 'client.rb'), "BaseAddress = 'http://h.hatena.ne.jp/api/'\n")
  git(work, 'add', '.')
  git(work, 'commit', '--quiet', '-m', 'pinned')
  pinned = git(work, 'rev-parse', 'HEAD')
  writeFileSync(join(work, 'client.rb'), "BaseAddress = 'http://elsewhere.example/api/'\n")
  git(work, 'commit', '--quiet', '-am', 'newer')
  tip = git(work, 'rev-parse', 'HEAD')
  // Served as <base>/someone/client, answering a want of any commit it holds, as GitHub does.
  const served = join(root, 'served', 'someone', 'client')
  git(root, 'clone', '--quiet', '--bare', work, served)
  git(served, 'config', 'uploadpack.allowReachableSHA1InWant', 'true')
  // A directory of mirrors, laid out owner+name/repo.
  git(root, 'clone', '--quiet', work, join(root, 'mirrors', 'someone+client', 'repo'))
})

afterAll(() => {
  rmSync(root, { recursive: true, force: true })
})

const options = (over: Partial<SourceOptions> & { cache: string }): SourceOptions => ({ gitBase: `file://${join(root, 'served')}`, ...over })
const fileAt = (gitDir: string, commit: string) => execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:client.rb`], { encoding: 'utf8' })

describe('the public repository, fetched into the cache', () => {
  const cache = () => join(root, 'cache-fetch')

  it('fetches the pinned commit alone (shallow), though it is not the tip, and nothing else', () => {
    const source = clientSource({ repository, commit: pinned }, options({ cache: cache() }))
    expect(source).toEqual({ gitDir: join(cache(), 'someone+client.git'), from: 'fetch' })
    const gitDir = (source as { gitDir: string }).gitDir
    expect(fileAt(gitDir, pinned)).toContain('h.hatena.ne.jp')
    expect(execFileSync('git', ['--git-dir', gitDir, 'rev-parse', '--is-shallow-repository'], { encoding: 'utf8' }).trim()).toBe('true')
    expect(() => execFileSync('git', ['--git-dir', gitDir, 'cat-file', '-e', tip], { stdio: 'ignore' })).toThrow()
  })

  it('takes it from the cache next time, with the repository out of reach', () => {
    const source = clientSource({ repository, commit: pinned }, options({ cache: cache(), gitBase: `file://${join(root, 'nowhere')}` }))
    expect(source).toEqual({ gitDir: join(cache(), 'someone+client.git'), from: 'cache' })
  })
})

describe('a local mirror', () => {
  it('is used as it is when it holds the commit: nothing is fetched', () => {
    const cache = join(root, 'cache-mirror')
    const source = clientSource({ repository, commit: pinned }, options({ cache, mirrors: join(root, 'mirrors'), gitBase: `file://${join(root, 'nowhere')}` }))
    expect(source).toEqual({ gitDir: join(root, 'mirrors', 'someone+client', 'repo', '.git'), from: 'mirror' })
    expect(fileAt((source as { gitDir: string }).gitDir, pinned)).toContain('h.hatena.ne.jp')
  })

  it('that lacks the client: the public repository is fetched instead', () => {
    const source = clientSource({ repository, commit: pinned }, options({ cache: join(root, 'cache-empty-mirror'), mirrors: join(root, 'no-mirrors') }))
    expect(source).toMatchObject({ from: 'fetch' })
  })
})

describe('neither', () => {
  it('says which repository and commit, what was tried, and how to provide it', () => {
    const source = clientSource({ repository, commit: pinned }, options({ cache: join(root, 'cache-none'), gitBase: `file://${join(root, 'nowhere')}` }))
    expect('missing' in source).toBe(true)
    const message = (source as { missing: string }).missing
    expect(message).toContain(`${repository} at ${pinned}`)
    expect(message).toContain(`file://${join(root, 'nowhere')}/${repository}`)
    expect(message).toContain('KIGO_INTEROP_MIRRORS')
    expect(message).toContain('someone+client')
  })

  it('a commit the repository does not have is missing too, not some other commit', () => {
    const source = clientSource({ repository, commit: '0'.repeat(40) }, options({ cache: join(root, 'cache-bad-commit') }))
    expect('missing' in source).toBe(true)
  })
})

describe('the environment', () => {
  it('names no machine: the cache under the user cache directory, GitHub, no mirror unless set', () => {
    expect(sourceOptions({ HOME: '/home/u', XDG_CACHE_HOME: '/home/u/.cache' })).toEqual({ cache: '/home/u/.cache/kigo-interop', gitBase: 'https://github.com' })
    expect(sourceOptions({ KIGO_INTEROP_MIRRORS: '/m', KIGO_INTEROP_CACHE: '/c', KIGO_INTEROP_GIT_BASE: 'https://git.example/' })).toEqual({ mirrors: '/m', cache: '/c', gitBase: 'https://git.example' })
  })
})
