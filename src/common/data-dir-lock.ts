// One process at a time on an embedded data directory (docs/operations.md#embedded-mode).
// PGlite keeps no lock of its own: a second process that opens the same directory (a
// second `npm start`, or `kigo export` beside a running kigo) writes the same files from
// another copy of the database's state, and the store is lost. The directory's `db.lock`
// names the process that has it open; a process that is gone (killed, crashed) leaves a
// stale lock that the next one takes over.
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The data directory is open in another live process. */
export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`the data directory ${dataDir} is in use by process ${pid}: stop that kigo first (an embedded store is opened by one process at a time)`)
    this.name = 'DataDirInUse'
  }
}

export interface DataDirLock {
  release(): void
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function holder(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/** Takes `dataDir/db.lock` for this process, or throws DataDirInUse naming the process that holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, 'db.lock')
  for (let attempt = 0; ; attempt++) {
    // Written whole beside it, then linked into place: the lock never exists without its PID.
    const own = `${path}.${process.pid}`
    writeFileSync(own, `${process.pid}\n`, { mode: 0o600 })
    try {
      linkSync(own, path)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = holder(path)
      // A live holder other than this process keeps it. This process's own PID in the file
      // is a lock left by an earlier process that had the same PID (PID 1 in a container).
      if (pid !== null && pid !== process.pid && alive(pid)) throw new DataDirInUse(dataDir, pid)
      // Stale: removed, and the link tried again. (Two processes that find the same stale
      // lock at the same instant could both go on; a start right after a crash, twice at once.)
      if (attempt >= 2) {
        if (pid !== null) throw new DataDirInUse(dataDir, pid)
        throw new Error(`could not take ${path}: another process keeps replacing it; stop the other kigo on ${dataDir} first`, { cause: err })
      }
      try {
        unlinkSync(path)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
      }
    } finally {
      unlinkSync(own)
    }
  }
  let held = true
  return {
    release() {
      if (!held) return
      held = false
      // Only its own: never a lock another process took over since.
      if (holder(path) === process.pid) unlinkSync(path)
    },
  }
}
