// `kigo`: the operator command line (SPEC §1.3), a thin client of the operator API of a
// running gateway (SPEC §6.4). `--json` prints the API's JSON body unchanged; otherwise
// a readable record or table. Errors: one line `kigo: <reason>` on stderr, exit 1 for a
// failed request, 2 for a wrong command line.
import { parseArgs } from 'node:util'
import { AdminClient, CliError, adminToken, adminUrl, usageError, type ApiResult, type Env } from './admin-client.js'
import { migrationCommands } from './migration-commands.js'
import { formatRecord, formatTable } from './output.js'
import { loginPasswordProblem } from '../common/password-rule.js'

export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

export interface OptionSpec {
  /** Shown in usage as `--name VALUE`. */
  value: string
  required?: boolean
}

export interface Parsed {
  args: string[]
  values: Record<string, string | undefined>
}

export interface Command {
  group: string
  /** '' for a group that is one command (`kigo usage`). */
  action: string
  /** Positional argument names, all required. */
  args: string[]
  options: Record<string, OptionSpec>
  summary: string
  run(client: AdminClient, input: Parsed): Promise<{ result: ApiResult; text: () => string }>
}

const seg = encodeURIComponent

/** `--scopes read_public,write_public` as a list. */
function scopeList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
}

const record = (result: ApiResult) => () => formatRecord(result.json as Record<string, unknown>)

const commands: Command[] = [
  {
    group: 'users',
    action: 'add',
    args: ['id'],
    options: { name: { value: 'NAME' }, password: { value: 'PW' } },
    summary: 'create a user; login and API passwords are generated when not given, and shown only now',
    async run(client, { args, values }) {
      const body: Record<string, string> = { id: args[0]! }
      if (values.name !== undefined) body.name = values.name
      if (values.password !== undefined) {
        const weak = loginPasswordProblem(values.password, args[0]!)
        if (weak !== null) throw usageError(`--password: ${weak}`)
        body.password = values.password
      }
      const result = await client.request('POST', '/admin/users', body)
      return { result, text: record(result) }
    },
  },
  {
    group: 'users',
    action: 'show',
    args: ['id'],
    options: {},
    summary: "show a user's ID, display name and creation time",
    async run(client, { args }) {
      const result = await client.request('GET', `/admin/users/${seg(args[0]!)}`)
      return { result, text: record(result) }
    },
  },
  {
    group: 'users',
    action: 'reset-api-password',
    args: ['id'],
    options: {},
    summary: 'generate a new API password (Basic and WSSE) for a user; the old one stops working',
    async run(client, { args }) {
      const result = await client.request('POST', `/admin/users/${seg(args[0]!)}/reset-api-password`)
      return { result, text: record(result) }
    },
  },
  {
    group: 'users',
    action: 'reset-password',
    args: ['id'],
    options: {},
    summary: "generate a new login password for a user, shown only now; the user's account sessions end",
    async run(client, { args }) {
      const result = await client.request('POST', `/admin/users/${seg(args[0]!)}/reset-password`)
      return { result, text: record(result) }
    },
  },
  {
    group: 'apps',
    action: 'add',
    args: ['name'],
    options: { owner: { value: 'ID', required: true }, scopes: { value: 'LIST', required: true }, callback: { value: 'URL' } },
    summary: 'register an OAuth application; prints its consumer key and secret',
    async run(client, { args, values }) {
      const body: Record<string, unknown> = { name: args[0]!, owner: values.owner, scopes: scopeList(values.scopes) }
      if (values.callback !== undefined) body.callback = values.callback
      const result = await client.request('POST', '/admin/apps', body)
      return { result, text: record(result) }
    },
  },
  {
    group: 'apps',
    action: 'list',
    args: [],
    options: { owner: { value: 'ID' } },
    summary: 'list registered applications (without secrets)',
    async run(client, { values }) {
      const query = values.owner === undefined ? '' : `?owner=${seg(values.owner)}`
      const result = await client.request('GET', `/admin/apps${query}`)
      const rows = (result.json as { apps: Array<Record<string, unknown>> }).apps
      return { result, text: () => formatTable(rows, ['consumer_key', 'name', 'owner', 'scopes', 'callback', 'created_at'], 'no applications') }
    },
  },
  {
    group: 'tokens',
    action: 'add',
    args: [],
    options: { consumer: { value: 'KEY', required: true }, user: { value: 'ID', required: true }, scopes: { value: 'LIST', required: true } },
    summary: 'issue an access token without the browser flow; prints the token and its secret',
    async run(client, { values }) {
      const body = { consumer: values.consumer, user: values.user, scopes: scopeList(values.scopes) }
      const result = await client.request('POST', '/admin/tokens', body)
      return { result, text: record(result) }
    },
  },
  {
    group: 'tokens',
    action: 'list',
    args: [],
    options: { user: { value: 'ID' }, consumer: { value: 'KEY' } },
    summary: 'list access tokens of a user or an application (without secrets)',
    async run(client, { values }) {
      const params = new URLSearchParams()
      if (values.user !== undefined) params.set('user', values.user)
      if (values.consumer !== undefined) params.set('consumer', values.consumer)
      const query = params.size > 0 ? `?${params.toString()}` : ''
      const result = await client.request('GET', `/admin/tokens${query}`)
      const rows = (result.json as { tokens: Array<Record<string, unknown>> }).tokens
      return { result, text: () => formatTable(rows, ['token', 'consumer', 'user', 'scopes', 'created_at', 'revoked_at'], 'no access tokens') }
    },
  },
  {
    group: 'tokens',
    action: 'revoke',
    args: ['token'],
    options: {},
    summary: 'revoke an access token',
    async run(client, { args }) {
      const result = await client.request('POST', `/admin/tokens/${seg(args[0]!)}/revoke`)
      return { result, text: () => `revoked token ${args[0]!}\n` }
    },
  },
  ...migrationCommands,
]

const groups = [...new Set(commands.map((c) => c.group))]

function synopsis(c: Command): string {
  const args = c.args.map((a) => `<${a}>`)
  const opts = Object.entries(c.options).map(([name, o]) => (o.required ? `--${name} ${o.value}` : `[--${name} ${o.value}]`))
  return ['kigo', c.group, c.action, ...args, ...opts].filter((w) => w !== '').join(' ')
}

const environmentHelp = `Environment:
  KIGO_ADMIN_URL    the gateway's operator API (default http://127.0.0.1:9090)
  KIGO_ADMIN_TOKEN  its bearer token; otherwise read from KIGO_DATA_DIR/admin-token
  KIGO_DATA_DIR     the gateway's data directory (default ./data)
`

function mainHelp(): string {
  return `kigo: operate a running kigo gateway

Usage: kigo [--json] <command> [arguments]

Commands:
${commands.map((c) => `  ${synopsis(c)}\n      ${c.summary}`).join('\n')}

Options:
  --json      print the operator API's JSON response unchanged
  -h, --help  show help (also after a command: kigo users add --help)

Scopes: read_public, write_public, read_private, write_private (comma-separated).

${environmentHelp}`
}

function groupHelp(group: string): string {
  const list = commands.filter((c) => c.group === group)
  return `Usage:\n${list.map((c) => `  ${synopsis(c)}\n      ${c.summary}`).join('\n')}\n\nRun kigo --help for options and environment.\n`
}

function commandHelp(c: Command): string {
  return `Usage: ${synopsis(c)} [--json]\n\n${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.\n\n${environmentHelp}`
}

/** node:util parseArgs messages span lines; a kigo error is one line. */
function parseError(err: unknown, c: Command): CliError {
  const e = err as { code?: string; message: string }
  let message = e.message.replace(/\s*\n\s*/g, ' ').trim()
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && /'-[^-]/.test(message)) {
    message += " (a value starting with '-' goes after '--')"
  }
  const name = `${c.group} ${c.action}`.trim()
  return usageError(`${name}: ${message}; see kigo ${name} --help`)
}

function parseCommand(c: Command, rest: string[]): Parsed & { json: boolean; help: boolean } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  }
  for (const name of Object.keys(c.options)) options[name] = { type: 'string' }
  let parsed
  try {
    parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: true })
  } catch (err) {
    throw parseError(err, c)
  }
  const values = parsed.values as Record<string, string | boolean | undefined>
  const json = values.json === true
  const help = values.help === true
  if (help) return { args: [], values: {}, json, help }
  const where = `${c.group} ${c.action}`.trim()
  if (parsed.positionals.length < c.args.length) {
    throw usageError(`${where}: missing <${c.args[parsed.positionals.length]!}>; usage: ${synopsis(c)}`)
  }
  if (parsed.positionals.length > c.args.length) {
    throw usageError(`${where}: unexpected argument ${JSON.stringify(parsed.positionals[c.args.length])}; usage: ${synopsis(c)}`)
  }
  const strings: Record<string, string | undefined> = {}
  for (const [name, spec] of Object.entries(c.options)) {
    const v = values[name]
    if (typeof v === 'string') strings[name] = v
    else if (spec.required) throw usageError(`${where}: --${name} ${spec.value} is required; usage: ${synopsis(c)}`)
  }
  return { args: parsed.positionals, values: strings, json, help }
}

/** Finds the command; leading global flags (`--json`, `--help`) may come before it. */
function route(argv: string[]): { command?: Command; group?: string; rest: string[]; help: boolean } {
  const globals: string[] = []
  let i = 0
  for (; i < argv.length && argv[i]!.startsWith('-'); i++) {
    const arg = argv[i]!
    if (arg === '--json' || arg === '--help' || arg === '-h') globals.push(arg)
    else if (arg === '--') {
      i++
      break
    } else throw usageError(`unknown option ${JSON.stringify(arg)}; see kigo --help`)
  }
  const help = globals.some((g) => g !== '--json')
  const group = argv[i]
  if (group === undefined) {
    if (help) return { rest: [], help }
    throw usageError('missing command; see kigo --help')
  }
  if (!groups.includes(group)) throw usageError(`unknown command ${JSON.stringify(group)}; commands: ${groups.join(', ')}`)
  const action = argv[i + 1]
  const list = commands.filter((c) => c.group === group)
  // A group that is one command (`kigo usage [--method …]`) takes its options directly.
  const single = list.find((c) => c.action === '')
  if (single && (action === undefined || action.startsWith('-'))) return { command: single, rest: [...globals, ...argv.slice(i + 1)], help: false }
  const command = list.find((c) => c.action === action)
  if (!command) {
    if (help || action === undefined || action === '--help' || action === '-h') {
      if (action === undefined && !help) throw usageError(`${group}: missing subcommand (${list.map((c) => c.action).join(', ')})`)
      return { group, rest: [], help: true }
    }
    throw usageError(`${group}: unknown subcommand ${JSON.stringify(action)}; one of ${list.map((c) => c.action).join(', ')}`)
  }
  return { command, rest: [...globals, ...argv.slice(i + 2)], help: false }
}

/** Runs one kigo invocation; returns the exit code. */
export async function main(argv: string[], env: Env, io: CliIo): Promise<number> {
  try {
    const routed = route(argv)
    if (!routed.command) {
      io.stdout.write(routed.group ? groupHelp(routed.group) : mainHelp())
      return 0
    }
    const c = routed.command
    const input = parseCommand(c, routed.rest)
    if (input.help) {
      io.stdout.write(commandHelp(c))
      return 0
    }
    const client = new AdminClient(adminUrl(env), adminToken(env))
    const { result, text } = await c.run(client, input)
    io.stdout.write(input.json ? result.text.trimEnd() + '\n' : text())
    return 0
  } catch (err) {
    if (err instanceof CliError) {
      io.stderr.write(`kigo: ${err.message}\n`)
      return err.exitCode
    }
    io.stderr.write(`kigo: internal error: ${(err as Error).message?.replace(/\s+/g, ' ') ?? String(err)}\n`)
    return 1
  }
}
