// The kigo command line's own argument reader. node:util parseArgs refuses an option value
// that starts with `-` (`--consumer -abc…`) and reads `-abc…` as unknown short options,
// yet consumer keys, tokens and passwords made before generated values avoided a leading
// `-` may start with one. kigo has no short options besides `-h`, so:
//   --name VALUE / --name=VALUE  a value option takes the next word, whatever it is;
//   -h, --help, --json, --csv    flags;
//   --                           every later word is an argument;
//   -abc…                        an argument (not a cluster of short options);
//   --nmae                       an unknown option, with the nearest known one suggested.
import { usageError } from './admin-client.js'

export interface ArgvSpec {
  /** Options that take a value. */
  values: string[]
  /** Options that are flags (besides --help and -h). */
  flags: string[]
}

export interface ReadArgs {
  positionals: string[]
  values: Record<string, string>
  flags: Set<string>
}

/** Edit distance (Levenshtein), for suggestions. */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]!
}

/** The known word nearest to a mistyped one, when it is close enough to be meant (a third of its length, at least 1; or a prefix). */
export function nearest(word: string, known: string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const k of known) {
    const d = distance(word, k)
    if (d < bestDistance) {
      best = k
      bestDistance = d
    }
  }
  if (best === undefined) return undefined
  if (bestDistance <= Math.max(1, Math.floor(best.length / 3))) return best
  const prefixed = known.filter((k) => word.length >= 2 && k.startsWith(word))
  return prefixed.length === 1 ? prefixed[0] : undefined
}

/** `; did you mean "x"?` or nothing. */
export function suggestion(word: string, known: string[], quote = (s: string) => JSON.stringify(s)): string {
  const near = nearest(word, known)
  return near === undefined ? '' : `; did you mean ${quote(near)}?`
}

/** Reads one command's words; `where` names the command in error messages. */
export function readArgs(words: string[], spec: ArgvSpec, where: string): ReadArgs {
  const out: ReadArgs = { positionals: [], values: {}, flags: new Set() }
  const flags = new Set(['help', ...spec.flags])
  const known = [...spec.values, ...flags].map((n) => `--${n}`)
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word === '--') {
      out.positionals.push(...words.slice(i + 1))
      break
    }
    if (word === '-h') {
      out.flags.add('help')
      continue
    }
    if (!word.startsWith('--') || word === '-') {
      out.positionals.push(word)
      continue
    }
    const eq = word.indexOf('=')
    const name = word.slice(2, eq === -1 ? undefined : eq)
    if (spec.values.includes(name)) {
      let value: string | undefined
      if (eq !== -1) value = word.slice(eq + 1)
      else if (i + 1 < words.length) value = words[++i]
      if (value === undefined) throw usageError(`${where}: --${name} needs a value; see kigo help ${where}`)
      if (name in out.values) throw usageError(`${where}: --${name} given twice`)
      out.values[name] = value
      continue
    }
    if (flags.has(name)) {
      if (eq !== -1) throw usageError(`${where}: --${name} takes no value`)
      out.flags.add(name)
      continue
    }
    const hint = suggestion(`--${name}`, known, (s) => s)
    throw usageError(`${where}: unknown option --${name}${hint || `; see kigo help ${where} (an argument starting with '--' goes after '--')`}`)
  }
  return out
}
