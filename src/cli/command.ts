// What a command of the `kigo` command line is (src/cli/kigo.ts lists them; the migration
// commands are in migration-commands.ts): in a module of its own, so the command tables
// import it and the command line imports them, without an import loop.
import type { AdminClient, ApiResult, Env } from './admin-client.js'

export interface OptionSpec {
  /** Shown in usage as `--name VALUE`. */
  value: string
  required?: boolean
}

export interface Parsed {
  args: string[]
  values: Record<string, string | undefined>
  /** Flags the command declares (`--csv`), when given. */
  flags?: Set<string>
}

export interface Command {
  group: string
  /** '' for a group that is one command (`kigo usage`). */
  action: string
  /** Positional argument names, all required. */
  args: string[]
  options: Record<string, OptionSpec>
  summary: string
  /** Command lines shown in the command's help, each one that works as written. */
  examples: string[]
  /** Flag options of this command besides --json and --help. */
  flags?: Record<string, string>
  run?(client: AdminClient, input: Parsed, terminal?: Terminal): Promise<{ result: ApiResult; text: () => string }>
  /** In place of run, a command that needs no operator API (kigo export, kigo import): prints its own output, returns the exit status. */
  local?(input: Parsed & { json: boolean }, env: Env, io: CommandIo): Promise<number>
}

/** Where a local command writes: its result on stdout, progress on stderr (a bar when it is a terminal). */
export interface CommandIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number }
}

/** The terminal a command may ask a question on (`kigo policy set` before a brownout or deny): present only when stdin and stderr are one. */
export interface Terminal {
  /** Writes `question` and resolves with the line typed. */
  ask(question: string): Promise<string>
}

/**
 * The body of a rotate-secret with `--overlap SECONDS` (docs/gateway.md#rotating-a-secret):
 * none without it. A value that is not a whole number is sent as given, for the operator
 * API to refuse in its own words.
 */
export function overlapBody(value: string | undefined): { overlap_seconds: unknown } | undefined {
  if (value === undefined) return undefined
  return { overlap_seconds: /^\d{1,9}$/.test(value) ? Number(value) : value }
}
