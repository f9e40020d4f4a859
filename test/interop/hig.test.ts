// hig.rb (Ruby), the IRC gateway to the original service shipped with net-irc, run
// unchanged but for its host against a running kigo: an IRC client (this test) talks to
// hig.rb, and hig.rb talks to kigo with Basic and the user's API password. Every command it
// handles is driven: connecting (statuses/friends, statuses/keywords), channel messages
// (statuses/update, with `>text` replies found in statuses/friends_timeline), the relayed
// friends timeline, CTCP ACTION fav/link/list/typo, WHOIS, WHO and PART (keywords/destroy).
// The assertions are on what hig.rb itself sends to its IRC client.
import { spawn, type ChildProcess } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startStack, type Stack } from '../helpers/stack.js'
import { available, checkout, driversDir } from './clients.js'

const runtimes = [{ check: ['ruby', '-rjson', '-rlogger', '-rostruct', '-e', 'exit 0'], package: 'ruby' }]
const word = 'interop-hig'

/** A line-oriented IRC connection that keeps every line it received. */
class Irc {
  lines: string[] = []
  private waiters: { test: (l: string) => boolean; resolve: (l: string) => void }[] = []
  private buffer = ''
  private constructor(private socket: Socket) {
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      this.buffer += chunk
      let nl: number
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl).replace(/\r$/, '')
        this.buffer = this.buffer.slice(nl + 1)
        this.lines.push(line)
        this.waiters = this.waiters.filter((w) => (w.test(line) ? (w.resolve(line), false) : true))
      }
    })
  }
  static async open(port: number): Promise<Irc> {
    for (let i = 0; ; i++) {
      try {
        const socket = await new Promise<Socket>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => resolve(s))
          s.once('error', reject)
        })
        return new Irc(socket)
      } catch (err) {
        if (i > 100) throw err
        await new Promise((r) => setTimeout(r, 100))
      }
    }
  }
  send(line: string): void {
    this.socket.write(line + '\r\n')
  }
  /** The first line, received already or later, that matches; fails after `ms`. */
  waitFor(pattern: RegExp, ms = 15_000): Promise<string> {
    const seen = this.lines.find((l) => pattern.test(l))
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hig.rb sent no line matching ${pattern} in ${ms} ms; it sent:\n${this.lines.join('\n')}`)), ms)
      this.waiters.push({ test: (l) => pattern.test(l), resolve: (l) => (clearTimeout(timer), resolve(l)) })
    })
  }
  /** Lines received from now on that match, after `ms` of quiet time. */
  async collect(pattern: RegExp, ms = 1500): Promise<string[]> {
    const from = this.lines.length
    await new Promise((r) => setTimeout(r, ms))
    return this.lines.slice(from).filter((l) => pattern.test(l))
  }
  close(): void {
    this.socket.destroy()
  }
}

describe.runIf(available('hig', runtimes))('hig.rb (IRC gateway) against kigo', () => {
  let stack: Stack
  let client: { dir: string; remove: () => void }
  let gateway: ChildProcess
  let log = ''
  let irc: Irc
  let basic: { alice: string; bob: string }
  const entries: Record<string, string> = {}
  let port = 0
  let alicePassword = ''

  async function api(user: 'alice' | 'bob', path: string, form?: Record<string, string>) {
    const res = await fetch(`${stack.url}/api/${path}`, {
      method: form ? 'POST' : 'GET',
      headers: { authorization: basic[user], ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    })
    const body = await res.json()
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`)
    return body
  }

  beforeAll(async () => {
    stack = await startStack()
    // alice's name is her nick: hig.rb leaves the user's own entries out when it looks up a reply target.
    const alice = await stack.addUser('alice', 'alice')
    const bob = await stack.addUser('bob', 'Bob')
    const b64 = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64')
    basic = { alice: b64('alice', alice.api_password), bob: b64('bob', bob.api_password) }
    // What alice already has when she connects: bob followed, the keyword followed, an
    // entry of hers with a reply from bob, and a plain entry from bob.
    entries.mine = (await api('alice', 'statuses/update.json', { keyword: word, status: 'hmm' })).id
    entries.reply = (await api('bob', 'statuses/update.json', { keyword: word, status: 'xyzzy', in_reply_to_status_id: String(entries.mine) })).id
    entries.plain = (await api('bob', 'statuses/update.json', { keyword: word, status: 'plenty of words' })).id
    await api('alice', 'friendships/create/bob.json', {})
    await api('alice', 'keywords/create.json', { word })

    client = checkout('hig', stack.url)
    port = await freePort()
    alicePassword = alice.api_password
    gateway = spawn('ruby', ['-I', '../lib', '-r', join(driversDir, 'ruby3_uri_escape.rb'), 'hig.rb', '-h', '127.0.0.1', '-p', String(port), '--debug'], { cwd: join(client.dir, 'examples'), stdio: ['ignore', 'pipe', 'pipe'] })
    gateway.stdout!.on('data', (d) => (log += d))
    gateway.stderr!.on('data', (d) => (log += d))
    irc = await Irc.open(port)
    irc.send(`PASS ${alice.api_password}`)
    irc.send('NICK alice')
    irc.send('USER alice 0 * :alice tid=10')
  }, 60_000)
  afterAll(async () => {
    irc?.close()
    gateway?.kill()
    client?.remove()
    await stack?.close()
  })

  /** Sends a CTCP ACTION (`/me ...`) to the main channel. */
  const me = (text: string) => irc.send(`PRIVMSG #haiku :\x01ACTION ${text}\x01`)
  let tid = ''

  it('connecting: NAMES from statuses/friends, a JOIN for each keyword from statuses/keywords', async () => {
    expect(await irc.waitFor(/^\S*353 alice = #haiku /)).toMatch(/ #haiku @bob$/)
    await irc.waitFor(/^:alice!alice@\S+ JOIN #interop-hig$/)
  })

  it("a channel message is posted on the channel's keyword (statuses/update)", async () => {
    irc.send(`PRIVMSG #${word} :hello from hig`)
    await irc.waitFor(/NOTICE #haiku :Status Updated via API$/)
    const timeline = await api('bob', `statuses/keyword_timeline/${word}.json`)
    const posted = timeline.find((s: { text: string }) => s.text.includes('hello from hig'))
    expect(posted).toMatchObject({ keyword: word, source: 'hig.rb', user: { id: 'alice' } })
  })

  it('the friends timeline is relayed: a reply, from its author, with a typable id', async () => {
    const line = await irc.waitFor(/^:bob!bob@\S+ PRIVMSG #interop-hig :xyzzy/)
    const m = /^:bob!bob@\S+ PRIVMSG #interop-hig :xyzzy > alice \x0310 \[(\w+)\]$/.exec(line)
    expect(m, line).not.toBeNull()
    tid = m![1]!
  })

  // hig.rb appends " > <in_reply_to_user_id>" unless that field is empty, calling String#empty?
  // on it. kigo answers JSON integer 0 there for an entry that answers nothing (a deliberate
  // difference, docs/api.md), so hig.rb drops every such entry: its own, and everyone's.
  it.fails('the friends timeline is relayed: an entry that answers nothing (fails: in_reply_to_user_id is JSON 0)', async () => {
    await irc.waitFor(/PRIVMSG #interop-hig :plenty of words/, 3000)
  })

  it('/me fav <typable id> stars that entry (favorites/create)', async () => {
    me(`fav ${tid}`)
    expect(await irc.waitFor(/NOTICE #haiku :Fav: /)).toMatch(/:Fav: .*: interop-hig=xyzzy$/)
    expect(await api('alice', `statuses/show/${entries.reply}.json`)).toMatchObject({ id: String(entries.reply), favorited: 1 })
  })

  it("/me link <typable id> answers the entry's link", async () => {
    me(`link ${tid}`)
    expect(await irc.waitFor(/NOTICE #haiku :?http/)).toMatch(new RegExp(`NOTICE #haiku :?${stack.url}/bob/${entries.reply}$`))
  })

  it('/me typo switches the typo mode', async () => {
    me('typo')
    await irc.waitFor(/NOTICE #haiku :typo mode: true$/)
    me('typo')
    await irc.waitFor(/NOTICE #haiku :typo mode: false$/)
  })

  it('WHOIS and WHO answer from statuses/friends', async () => {
    irc.send('WHOIS bob')
    expect(await irc.waitFor(/^\S*311 alice bob /)).toMatch(/ bob bob \S+ \* :Bob \/ $/)
    irc.send('WHO #haiku')
    expect(await irc.waitFor(/^\S*352 alice #haiku /)).toMatch(/#haiku bob \S+ \S+ bob H\*@ :0 Bob$/)
  })

  it('a message ending in >text replies to the entry that text finds in statuses/friends_timeline; the own reply comes back as TOPIC', async () => {
    irc.send(`PRIVMSG #${word} :nice one >xyzzy`)
    const topic = await irc.waitFor(/^:alice!alice@\S+ TOPIC #interop-hig :/)
    expect(topic).toMatch(/nice one >xyzzy > bob$/)
    const timeline = await api('bob', `statuses/keyword_timeline/${word}.json`)
    expect(timeline.find((s: { text: string }) => s.text.includes('nice one'))).toMatchObject({ in_reply_to_status_id: String(entries.reply), in_reply_to_user_id: 'bob' })
  })

  it('PART unfollows the keyword (keywords/destroy)', async () => {
    irc.send(`PART #${word}`)
    await irc.waitFor(/^:alice!alice@\S+ PART #interop-hig$/)
    expect(await api('bob', 'statuses/keywords/alice.json')).toEqual([])
  })

  // hig.rb sends each entry of `list` as an IRC parameter without making it a string, which
  // ends its own IRC session; what it asked kigo for and received is in its debug log. So
  // this runs last, on a second connection.
  it('/me list <nick> reads that user\'s entries (statuses/user_timeline?id=)', async () => {
    const second = await Irc.open(port)
    second.send(`PASS ${alicePassword}`)
    second.send('NICK alice')
    second.send('USER alice 0 * :alice')
    await second.waitFor(/(^|\s)366 /)
    const from = log.length
    second.send(`PRIVMSG #haiku :\x01ACTION list bob\x01`)
    for (let i = 0; i < 100 && !/"user"=>/.test(log.slice(from)); i++) await new Promise((r) => setTimeout(r, 100))
    second.close()
    const received = log.slice(from)
    expect(received).toMatch(/user_timeline\.json\?id=bob&/)
    const authors = [...received.matchAll(/DEBUG -- : \{"id"=>"\d+".*?"user"=>\{"id"=>"(\w+)"/g)].map((m) => m[1])
    expect(authors.length).toBeGreaterThan(0)
    expect(new Set(authors)).toEqual(new Set(['bob']))
  })
})
