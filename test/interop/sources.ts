// Where a real client's code comes from (docs/interop.md#where-the-clients-come-from): its
// public repository at the pinned commit. In order:
// 1. a local mirror, when KIGO_INTEROP_MIRRORS names a directory of them (one git
//    directory per repository, named owner+name: a clone, a bare clone, or owner+name/repo);
// 2. the cache (KIGO_INTEROP_CACHE, default $XDG_CACHE_HOME/kigo-interop or
//    ~/.cache/kigo-interop), when an earlier run fetched the commit there;
// 3. a shallow fetch of the one commit from the public repository
//    (KIGO_INTEROP_GIT_BASE, default https://github.com) into the cache.
// None of them: the reason, saying how to provide the client.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export interface Pinned {
  /** owner/name on GitHub. */
  repository: string
  commit: string
}

export interface SourceOptions {
  /** The directory of local mirrors, if any. */
  mirrors?: string
  /** Where fetched commits are kept between runs. */
  cache: string
  /** Where public repositories are fetched from: `${gitBase}/${repository}`. */
  gitBase: string
}

/** The options this process's environment gives. */
export function sourceOptions(env: NodeJS.ProcessEnv = process.env): SourceOptions {
  const cacheHome = env.XDG_CACHE_HOME || join(homedir(), '.cache')
  return {
    ...(env.KIGO_INTEROP_MIRRORS ? { mirrors: env.KIGO_INTEROP_MIRRORS } : {}),
    cache: env.KIGO_INTEROP_CACHE || join(cacheHome, 'kigo-interop'),
    gitBase: (env.KIGO_INTEROP_GIT_BASE || 'https://github.com').replace(/\/+$/, ''),
  }
}

/** A git directory holding the pinned commit, and where it came from; or why there is none. */
export type Source = { gitDir: string; from: 'mirror' | 'cache' | 'fetch' } | { missing: string }

const git = (args: string[], timeout = 120_000) => spawnSync('git', args, { encoding: 'utf8', timeout, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } })

const holds = (gitDir: string, commit: string) => existsSync(gitDir) && git(['--git-dir', gitDir, 'cat-file', '-e', `${commit}^{commit}`]).status === 0

const dirName = (repository: string) => repository.replace('/', '+')

/** The git directories a mirror may keep a repository in. */
function mirrorCandidates(root: string, repository: string): string[] {
  const name = dirName(repository)
  return [join(root, name, 'repo', '.git'), join(root, name, 'repo'), join(root, `${name}.git`), join(root, name, '.git'), join(root, name)]
}

/** The pinned commit's git directory (see the header), fetching it into the cache when nothing local holds it. */
export function clientSource(pinned: Pinned, options: SourceOptions = sourceOptions()): Source {
  const { repository, commit } = pinned
  if (options.mirrors !== undefined) {
    const found = mirrorCandidates(options.mirrors, repository).find((dir) => holds(dir, commit))
    if (found !== undefined) return { gitDir: found, from: 'mirror' }
  }
  const cached = join(options.cache, `${dirName(repository)}.git`)
  if (holds(cached, commit)) return { gitDir: cached, from: 'cache' }
  const url = `${options.gitBase}/${repository}`
  mkdirSync(options.cache, { recursive: true })
  if (!existsSync(cached)) git(['init', '--quiet', '--bare', cached])
  const fetched = git(['--git-dir', cached, 'fetch', '--quiet', '--depth', '1', '--no-tags', url, commit])
  if (fetched.status === 0 && holds(cached, commit)) return { gitDir: cached, from: 'fetch' }
  const why = (fetched.stderr || fetched.error?.message || `exit ${fetched.status}`).trim().split('\n').pop()
  return {
    missing: `${repository} at ${commit} is not available: ${options.mirrors === undefined ? 'no local mirror is configured' : `no mirror under ${options.mirrors} holds it`}, and fetching it from ${url} failed (${why}). ` +
      'Let git reach that repository (it is fetched once into the cache, KIGO_INTEROP_CACHE), or set KIGO_INTEROP_MIRRORS to a directory holding a clone of it named ' +
      `${dirName(repository)} (docs/interop.md#where-the-clients-come-from)`,
  }
}
