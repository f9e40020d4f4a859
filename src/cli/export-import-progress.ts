// The progress of `kigo export` and `kigo import` on stderr (docs/operations.md#moving-to-postgresql): a bar
// redrawn in place when stderr is a terminal, otherwise one plain line every few seconds
// (a log or a pipe keeps every line, so a bar there would be noise): rows done of the
// total, the rate so far, and the time left at that rate.

export interface ProgressOutput {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

export interface ProgressOptions {
  /** `export` or `import`: the first word of every line. */
  what: string
  total: number
  out: ProgressOutput
  /** Seconds between plain lines. */
  everySeconds: number
  now?: () => number
}

const barRedrawMs = 100

/** 1234567 as `1,234,567`. */
const count = (n: number): string => Math.round(n).toLocaleString('en-US')

/** A duration as `42 s`, `3 min 05 s` or `1 h 02 min`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
}

export class Progress {
  private done = 0
  private readonly started: number
  private last: number
  private readonly tty: boolean
  private readonly now: () => number

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? Date.now
    this.started = this.now()
    this.last = this.started
    this.tty = options.out.isTTY === true
  }

  /** `n` more rows done. */
  add(n: number): void {
    this.done += n
    const now = this.now()
    if (this.tty) {
      if (now - this.last >= barRedrawMs) {
        this.last = now
        this.options.out.write(`\r${this.bar(now)}\x1b[K`)
      }
    } else if (now - this.last >= this.options.everySeconds * 1000) {
      this.last = now
      this.options.out.write(`${this.line(now)}\n`)
    }
  }

  /** The last word: how many rows, how long. */
  finish(): void {
    const seconds = (this.now() - this.started) / 1000
    const rate = seconds > 0 ? ` (${count(this.done / seconds)} rows/s)` : ''
    this.options.out.write(`${this.tty ? '\r\x1b[K' : ''}${this.options.what}: ${count(this.done)} rows in ${duration(seconds)}${rate}\n`)
  }

  private figures(now: number): { percent: string; rate: number; left: string } {
    const { total } = this.options
    const seconds = (now - this.started) / 1000
    const rate = seconds > 0 ? this.done / seconds : 0
    const percent = total > 0 ? `${Math.min(100, Math.floor((this.done / total) * 100))}%` : '100%'
    const left = rate > 0 ? `about ${duration(Math.max(0, total - this.done) / rate)} left` : 'time left unknown'
    return { percent, rate, left }
  }

  /** `import: 120,000 of 1,000,000 rows (12%), 35,210 rows/s, about 25 s left` */
  line(now = this.now()): string {
    const f = this.figures(now)
    return `${this.options.what}: ${count(this.done)} of ${count(this.options.total)} rows (${f.percent}), ${count(f.rate)} rows/s, ${f.left}`
  }

  private bar(now: number): string {
    const f = this.figures(now)
    const text = ` ${f.percent} ${count(this.done)}/${count(this.options.total)} rows, ${count(f.rate)} rows/s, ${f.left}`
    const width = Math.max(10, Math.min(40, (this.options.out.columns ?? 80) - text.length - this.options.what.length - 4))
    const filled = this.options.total > 0 ? Math.min(width, Math.floor((this.done / this.options.total) * width)) : width
    return `${this.options.what} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}]${text}`
  }
}
