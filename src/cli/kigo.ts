// `kigo`: the operator command line (docs/operations.md#operator-command-line), a thin client of the operator API of a
// running gateway (docs/gateway.md#the-operator-api-and-dashboard). `--json` prints the API's JSON body unchanged; otherwise
// a readable record or table. Errors: one line `kigo: <reason>` on stderr, exit 1 for a
// failed request, 2 for a wrong command line.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { projectRoot } from '../common/config.js'
import { AdminClient, CliError, adminToken, adminUrl, usageError, type ApiResult, type Env } from './admin-client.js'
import { readArgs, suggestion } from './argv.js'
import { type Command, type Parsed, type Terminal } from './command.js'
import { migrationCommands } from './migration-commands.js'
import { accessCommands } from './access-commands.js'
import { oidcCommands } from './oidc-commands.js'
import { siteCommands } from './site-commands.js'
import { registrationCommands } from './registration-commands.js'
import { exportImportCommands } from './export-import.js'
import { noticeCommands } from './notice-commands.js'
import { formatRecord, formatTable, type Field } from './output.js'
import { loginPasswordProblem } from '../common/password-rule.js'

export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown; isTTY?: boolean }
  /** The process's stdin; a command asks questions only when it and stderr are a terminal. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean }
}

/** A question asked on stderr, answered on stdin, when both are a terminal; none otherwise. */
function terminalOf(io: CliIo): Terminal | undefined {
  const stdin = io.stdin
  if (stdin?.isTTY !== true || io.stderr.isTTY !== true) return undefined
  return {
    async ask(question) {
      io.stderr.write(question)
      // The terminal echoes what is typed (cooked mode): only the line is read here.
      const rl = createInterface({ input: stdin, terminal: false })
      try {
        for await (const line of rl) return line
        return ''
      } finally {
        rl.close()
      }
    },
  }
}


const seg = encodeURIComponent

/** `--scopes read_public,write_public` as a list. */
function scopeList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
}

const record = (result: ApiResult) => () => formatRecord(result.json as Record<string, Field>)
/** The body of POST /admin/apps/{key}/oauth2: the redirect URI when given, and whether the client is public. */
const oauth2Body = (redirectUri: string | undefined, isPublic: boolean) => ({ ...(redirectUri === undefined ? {} : { redirect_uri: redirectUri }), ...(isPublic ? { public: true } : {}) })

const commands: Command[] = [
  {
    group: 'users',
    action: 'add',
    args: ['id'],
    options: { name: { value: 'NAME' }, password: { value: 'PW' } },
    summary: 'create a user; login and API passwords are generated when not given, and shown only now',
    examples: ['kigo users add alice --name "Alice"', 'kigo users add bob --password -starts-with-a-dash --json'],
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
    summary: "show a user's ID, display name, contact e-mail (and a new one waiting for its owner's confirmation) and creation time",
    examples: ['kigo users show alice', 'kigo users show alice --json'],
    async run(client, { args }) {
      const result = await client.request('GET', `/admin/users/${seg(args[0]!)}`)
      const u = result.json as { id: string; name: string; email: string | null; email_pending?: string | null; email_pending_until?: string | null; created_at: string }
      // The address in use was confirmed by its owner's link or set by an operator; a new
      // one the user asked for is used only once its link is opened.
      const shown: Record<string, Field> = {
        id: u.id,
        name: u.name,
        email: u.email === null ? 'none' : `${u.email} (in use: confirmed by its owner, or set by an operator)`,
        ...(u.email_pending && u.email_pending_until ? { email_pending: `${u.email_pending} (not confirmed yet: its link works until ${u.email_pending_until})` } : {}),
        created_at: u.created_at,
      }
      return { result, text: () => formatRecord(shown) }
    },
  },
  {
    group: 'users',
    action: 'reset-api-password',
    args: ['id'],
    options: {},
    summary: 'generate a new API password (Basic and WSSE) for a user; the old one stops working',
    examples: ['kigo users reset-api-password alice --json'],
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
    examples: ['kigo users reset-password alice', 'kigo users reset-password alice --json'],
    async run(client, { args }) {
      const result = await client.request('POST', `/admin/users/${seg(args[0]!)}/reset-password`)
      return { result, text: record(result) }
    },
  },
  {
    group: 'users',
    action: 'list',
    args: [],
    options: {},
    summary: 'list users: ID, display name, contact e-mail, creation time',
    examples: ['kigo users list', 'kigo users list --json'],
    async run(client) {
      const result = await client.request('GET', '/admin/users')
      const rows = (result.json as { users: Array<Record<string, Field>> }).users
      return { result, text: () => formatTable(rows, ['id', 'name', 'email', 'created_at'], 'no users') }
    },
  },
  {
    group: 'users',
    action: 'set-name',
    args: ['id', 'name'],
    options: {},
    summary: "change a user's display name, shown at once wherever the user appears",
    examples: ['kigo users set-name alice "Alice Liddell"'],
    async run(client, { args }) {
      const result = await client.request('PUT', `/admin/users/${seg(args[0]!)}/name`, { name: args[1]! })
      return { result, text: record(result) }
    },
  },
  {
    group: 'users',
    action: 'set-email',
    args: ['id', 'email'],
    options: {},
    summary: "set a user's contact e-mail (shown beside their legacy usage), or none to clear it",
    examples: ['kigo users set-email alice alice@example.com', 'kigo users set-email alice none'],
    async run(client, { args }) {
      const email = args[1] === 'none' ? null : args[1]!
      const result = await client.request('PUT', `/admin/users/${seg(args[0]!)}/email`, { email })
      return { result, text: record(result) }
    },
  },
  ...registrationCommands({
    group: 'apps',
    path: '/admin/apps',
    id: 'consumer_key',
    listed: 'apps',
    columns: ['consumer_key', 'name', 'owner', 'scopes', 'callback', 'created_at'],
    none: 'no applications',
    add: {
      options: { owner: { value: 'ID', required: true }, scopes: { value: 'LIST', required: true }, callback: { value: 'URL' }, 'redirect-uri': { value: 'URL' } },
      flags: {
        oauth2: 'turn OAuth 2.0 on as well: an OAuth 2.0 client of the same name, owner and scopes (needs --redirect-uri or --callback)',
        public: 'with --oauth2: a public OAuth 2.0 client (an app on a device): no client secret, PKCE alone',
      },
      summary: 'register an OAuth application; prints its consumer key and secret and, with --oauth2, its client_id and (confidential) client_secret',
      examples: [
        'kigo apps add "Alice\'s client" --owner alice --scopes read_public,write_public --callback https://client.example/cb',
        'kigo apps add "Alice\'s client" --owner alice --scopes read_public --oauth2 --redirect-uri https://client.example/cb --json',
      ],
      body({ args, values, flags }) {
        if (flags?.has('oauth2') !== true && (flags?.has('public') || values['redirect-uri'] !== undefined)) throw usageError('--redirect-uri and --public go with --oauth2')
        const body: Record<string, unknown> = { name: args[0]!, owner: values.owner, scopes: scopeList(values.scopes) }
        if (values.callback !== undefined) body.callback = values.callback
        return body
      },
      // With --oauth2, all or nothing: the OAuth 2.0 client too, or the application just registered goes again.
      async after(client, { values, flags }, registered) {
        if (flags?.has('oauth2') !== true) return null
        const app = registered.json as { consumer_key: string; consumer_secret: string }
        let on: ApiResult
        try {
          on = await client.request('POST', `/admin/apps/${seg(app.consumer_key)}/oauth2`, oauth2Body(values['redirect-uri'], flags.has('public')))
        } catch (err) {
          await client.request('DELETE', `/admin/apps/${seg(app.consumer_key)}`).catch(() => undefined)
          throw err
        }
        const { consumer_key, client_id, client_secret, ...rest } = on.json as Record<string, Field>
        const both: Record<string, Field> = { consumer_key, consumer_secret: app.consumer_secret, client_id, ...(client_secret === undefined ? {} : { client_secret }), ...rest }
        return { result: { text: JSON.stringify(both), json: both }, text: () => formatRecord(both) }
      },
    },
    summaries: {
      list: 'list registered applications (without secrets)',
      show: 'show one application (without its secret) and how many access tokens it holds',
      rotate: "generate a new consumer secret; the old one keeps working a day, or --overlap seconds (0: it stops at once); the application's tokens stay valid",
      delete: 'delete an application and every token issued to it; its clients stop working at once',
    },
    exampleOverlap: 3600,
  }),
  {
    group: 'apps',
    action: 'oauth2',
    args: ['consumer_key'],
    options: { 'redirect-uri': { value: 'URL', required: true } },
    flags: { public: 'a public OAuth 2.0 client (an app on a device): no client secret, PKCE alone' },
    summary: 'turn OAuth 2.0 on for an existing application (same name, owner, scopes and users); prints its client_id and (confidential) client_secret, shown once',
    examples: ['kigo apps oauth2 CONSUMER_KEY --redirect-uri https://client.example/cb --json'],
    async run(client, { args, values, flags }) {
      const result = await client.request('POST', `/admin/apps/${seg(args[0]!)}/oauth2`, oauth2Body(values['redirect-uri'], flags?.has('public') === true))
      return { result, text: record(result) }
    },
  },
  {
    group: 'tokens',
    action: 'introspect',
    args: ['access_token'],
    options: {},
    summary: "what the gateway makes of an OAuth 2.0 access token: active, with its user, client, scopes and expiry, or why not (expired, revoked, unknown)",
    examples: ['kigo tokens introspect eyJhbGciOiJSUzI1NiIs… --json'],
    async run(client, { args }) {
      const result = await client.request('POST', '/admin/oauth2/introspect', { token: args[0]! })
      return { result, text: record(result) }
    },
  },
  {
    group: 'tokens',
    action: 'add',
    args: [],
    options: { consumer: { value: 'KEY', required: true }, user: { value: 'ID', required: true }, scopes: { value: 'LIST', required: true } },
    summary: 'issue an access token without the browser flow; prints the token and its secret',
    examples: ['kigo tokens add --consumer CONSUMER_KEY --user alice --scopes write_public'],
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
    examples: ['kigo tokens list --user alice', 'kigo tokens list --consumer CONSUMER_KEY --json'],
    async run(client, { values }) {
      const params = new URLSearchParams()
      if (values.user !== undefined) params.set('user', values.user)
      if (values.consumer !== undefined) params.set('consumer', values.consumer)
      const query = params.size > 0 ? `?${params.toString()}` : ''
      const result = await client.request('GET', `/admin/tokens${query}`)
      const rows = (result.json as { tokens: Array<Record<string, Field>> }).tokens
      return { result, text: () => formatTable(rows, ['token', 'consumer', 'user', 'scopes', 'created_at', 'revoked_at'], 'no access tokens') }
    },
  },
  {
    group: 'tokens',
    action: 'revoke',
    args: ['token'],
    options: {},
    summary: 'revoke an access token',
    examples: ['kigo tokens revoke TOKEN', 'kigo tokens revoke -token-starting-with-a-dash'],
    async run(client, { args }) {
      const result = await client.request('POST', `/admin/tokens/${seg(args[0]!)}/revoke`)
      return { result, text: () => `revoked token ${args[0]!}\n` }
    },
  },
  ...migrationCommands,
  ...accessCommands,
  ...oidcCommands,
  ...siteCommands,
  ...exportImportCommands,
  ...noticeCommands,
]

const groups = [...new Set(commands.map((c) => c.group))]

function synopsis(c: Command): string {
  const args = c.args.map((a) => `<${a}>`)
  const opts = Object.entries(c.options).map(([name, o]) => (o.required ? `--${name} ${o.value}` : `[--${name} ${o.value}]`))
  const flags = Object.keys(c.flags ?? {}).map((name) => `[--${name}]`)
  return ['kigo', c.group, c.action, ...args, ...opts, ...flags].filter((w) => w !== '').join(' ')
}

const environmentHelp = `Environment:
  KIGO_ADMIN_URL    the gateway's operator API (default http://127.0.0.1:$KIGO_ADMIN_PORT, or port 9090)
  KIGO_ADMIN_PORT   the gateway's operator port, as the gateway reads it (used when KIGO_ADMIN_URL is unset)
  KIGO_ADMIN_TOKEN  its bearer token; otherwise read from KIGO_DATA_DIR/admin-token
  KIGO_DATA_DIR     the gateway's data directory (default ./data)
`

function mainHelp(): string {
  return `kigo: operate a running kigo gateway

Usage: kigo [--json] <command> [arguments]
       kigo help [command]

Commands:
${commands.map((c) => `  ${synopsis(c)}\n      ${c.summary}`).join('\n')}

Options:
  --json         print the operator API's JSON response unchanged (errors too, on stderr)
  -h, --help     show help (also after a command: kigo users add --help)
  --version      print kigo's version
  --             every later word is an argument, even one starting with '-'

Values may start with '-' (--consumer -abc, tokens revoke -abc).
Scopes: read_public, write_public, read_private, write_private (comma-separated).

Example:
  kigo users add alice --name "Alice"

${environmentHelp}`
}

function groupHelp(group: string): string {
  const list = commands.filter((c) => c.group === group)
  return `Usage:\n${list.map((c) => `  ${synopsis(c)}\n      ${c.summary}`).join('\n')}\n\nExamples:\n${list.map((c) => `  ${c.examples[0]!}`).join('\n')}\n\nRun kigo help for options and environment.\n`
}

function commandHelp(c: Command): string {
  const flags = Object.entries(c.flags ?? {}).map(([name, what]) => `  --${name.padEnd(6)} ${what}\n`).join('')
  return `Usage: ${synopsis(c)} [--json]\n\n${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.\n${flags ? `\nOptions:\n${flags}` : ''}\nExample${c.examples.length > 1 ? 's' : ''}:\n${c.examples.map((e) => `  ${e}`).join('\n')}\n\n${environmentHelp}`
}

function parseCommand(c: Command, rest: string[]): Parsed & { json: boolean; help: boolean } {
  const where = `${c.group} ${c.action}`.trim()
  const read = readArgs(rest, { values: Object.keys(c.options), flags: ['json', ...Object.keys(c.flags ?? {})] }, where)
  const json = read.flags.has('json')
  const help = read.flags.has('help')
  if (help) return { args: [], values: {}, json, help }
  if (read.positionals.length < c.args.length) {
    throw usageError(`${where}: missing <${c.args[read.positionals.length]!}>; usage: ${synopsis(c)}`)
  }
  if (read.positionals.length > c.args.length) {
    throw usageError(`${where}: unexpected argument ${JSON.stringify(read.positionals[c.args.length])}; usage: ${synopsis(c)}`)
  }
  const strings: Record<string, string | undefined> = {}
  for (const [name, spec] of Object.entries(c.options)) {
    const v = read.values[name]
    if (v !== undefined) strings[name] = v
    else if (spec.required) throw usageError(`${where}: --${name} ${spec.value} is required; usage: ${synopsis(c)}`)
  }
  return { args: read.positionals, values: strings, flags: read.flags, json, help }
}

type Routed =
  | { kind: 'run'; command: Command; rest: string[] }
  | { kind: 'help'; text: string }
  | { kind: 'version' }

/** `kigo help`, `kigo help users`, `kigo help users add`. */
function helpFor(words: string[]): string {
  const [group, action] = words
  if (group === undefined) return mainHelp()
  if (!groups.includes(group)) throw usageError(`help: unknown command ${JSON.stringify(group)}${suggestion(group, groups)}; commands: ${groups.join(', ')}`)
  const list = commands.filter((c) => c.group === group)
  const single = list.find((c) => c.action === '')
  if (single) return commandHelp(single)
  if (action === undefined) return groupHelp(group)
  // A two-word subcommand (`kigo help admin sessions revoke`).
  const command = list.find((c) => c.action === words.slice(1).join(' ')) ?? list.find((c) => c.action === action)
    ?? list.find((c) => c.action.startsWith(`${action} `))
  if (!command) throw usageError(`help: unknown subcommand ${JSON.stringify(`${group} ${action}`)}${suggestion(action, list.map((c) => c.action))}`)
  return commandHelp(command)
}

/** Finds the command; leading global flags (`--json`, `--help`, `--version`) may come before it. */
function route(argv: string[]): Routed {
  const globals: string[] = []
  let i = 0
  for (; i < argv.length && argv[i]!.startsWith('-'); i++) {
    const arg = argv[i]!
    if (arg === '--json' || arg === '--help' || arg === '-h') globals.push(arg)
    else if (arg === '--version') return { kind: 'version' }
    else if (arg === '--') {
      i++
      break
    } else {
      const hint = suggestion(arg, ['--json', '--help', '--version'], (s) => s)
      throw usageError(`unknown option ${arg}${hint || '; see kigo help'}`)
    }
  }
  const help = globals.some((g) => g !== '--json')
  const group = argv[i]
  if (group === undefined) {
    if (help) return { kind: 'help', text: mainHelp() }
    throw usageError('missing command; see kigo help')
  }
  if (group === 'help') return { kind: 'help', text: helpFor(argv.slice(i + 1).filter((w) => !w.startsWith('-'))) }
  if (!groups.includes(group)) throw usageError(`unknown command ${JSON.stringify(group)}${suggestion(group, [...groups, 'help'])}; commands: ${groups.join(', ')}, help`)
  const action = argv[i + 1]
  const list = commands.filter((c) => c.group === group)
  const actions = list.map((c) => c.action)
  // A group that is one command (`kigo usage [--method …]`) takes its options directly.
  const single = list.find((c) => c.action === '')
  if (single) return { kind: 'run', command: single, rest: [...globals, ...argv.slice(i + 1)] }
  // A two-word subcommand (`kigo admin sessions revoke`) before a one-word one.
  const pair = argv[i + 2] === undefined ? undefined : list.find((c) => c.action === `${action} ${argv[i + 2]}`)
  if (pair) return { kind: 'run', command: pair, rest: [...globals, ...argv.slice(i + 3)] }
  const command = list.find((c) => c.action === action)
  if (!command) {
    if (help || action === '--help' || action === '-h') return { kind: 'help', text: groupHelp(group) }
    if (action === undefined) throw usageError(`${group}: missing subcommand (${actions.join(', ')}); see kigo help ${group}`)
    const firsts = actions.filter((x) => x.startsWith(`${action} `))
    if (firsts.length > 0) throw usageError(`${group} ${action}: missing subcommand (${firsts.map((x) => x.slice(action.length + 1)).join(', ')}); see kigo help ${group}`)
    throw usageError(`${group}: unknown subcommand ${JSON.stringify(action)}${suggestion(action, actions)}; one of ${actions.join(', ')}`)
  }
  return { kind: 'run', command, rest: [...globals, ...argv.slice(i + 2)] }
}

/** kigo's version, from its package.json. */
export function version(): string {
  return (JSON.parse(readFileSync(resolve(projectRoot, 'package.json'), 'utf8')) as { version: string }).version
}

/** Whether the command line asks for JSON (errors are then JSON too). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}

/** Runs one kigo invocation; returns the exit code. */
export async function main(argv: string[], env: Env, io: CliIo): Promise<number> {
  const json = wantsJson(argv)
  try {
    const routed = route(argv)
    if (routed.kind === 'version') {
      io.stdout.write(json ? JSON.stringify({ version: version() }) + '\n' : `kigo ${version()}\n`)
      return 0
    }
    if (routed.kind === 'help') {
      io.stdout.write(routed.text)
      return 0
    }
    const c = routed.command
    const input = parseCommand(c, routed.rest)
    if (input.help) {
      io.stdout.write(commandHelp(c))
      return 0
    }
    if (c.local) return await c.local(input, env, io)
    const client = new AdminClient(adminUrl(env), adminToken(env))
    const { result, text } = await c.run!(client, input, terminalOf(io))
    io.stdout.write(input.json ? result.text.trimEnd() + '\n' : text())
    return 0
  } catch (err) {
    const e = err instanceof CliError ? err : new CliError(`internal error: ${(err as Error).message?.replace(/\s+/g, ' ') ?? String(err)}`, 1)
    // Under --json an error is one JSON line too: the operator API's own error object when
    // it answered with one, else {"error":{"code","message"}} (usage, unreachable, internal).
    io.stderr.write(json ? JSON.stringify({ error: e.apiError ?? { code: e.exitCode === 2 ? 'usage' : 'failed', message: e.message } }) + '\n' : `kigo: ${e.message}\n`)
    return e.exitCode
  }
}
