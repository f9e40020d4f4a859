// Loads `oidc-provider` once. Its current release line (9) supports Node 22 and later and
// prints an unstructured "Unsupported runtime" warning on stderr when imported on Node 20,
// which kigo still supports and tests (docs/oidc.md#node-versions). That one line is held
// back while the library loads and handed to the gateway's logger instead, as a
// structured line; any other output of the library passes through untouched.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type * as Library from 'oidc-provider'

export type OidcLibrary = typeof Library

const runtimeWarning = 'oidc-provider WARNING: Unsupported runtime'

let told = false
let loading: Promise<{ library: OidcLibrary; heldWarning: string | null }> | undefined

export async function loadOidcLibrary(log?: (message: string) => void): Promise<OidcLibrary> {
  loading ??= (async () => {
    const warn = console.warn
    let heldWarning: string | null = null
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes(runtimeWarning)) heldWarning = args[0]
      else warn(...args)
    }
    try {
      return { library: await import('oidc-provider'), heldWarning }
    } finally {
      console.warn = warn
    }
  })()
  const { library, heldWarning } = await loading
  if (heldWarning !== null && log && !told) {
    told = true
    log(`oidc-provider prefers Node 22 or later; this is Node ${process.versions.node}, which kigo supports and tests (docs/oidc.md#node-versions)`)
  }
  return library
}

/** The library's own AsyncLocalStorage (lib/helpers/als.js): its request context while its middleware runs. */
interface ContextStorage {
  disable(): void
}

/**
 * The provider's request handler, with the library's AsyncLocalStorage switched off again
 * whenever no provider request is in flight. On Node 20 an AsyncLocalStorage that has
 * run once keeps async hooks turned on for the whole process, so every later request of
 * the gateway, provider or not, paid for them (about a tenth of an anonymous request's
 * CPU). The library enables the storage again at its next request (`run`); a request of
 * its own never sees it disabled, as the storage is switched off only once every one has
 * been answered. On Node 24, where the storage is built on the async context frame,
 * switching it off costs nothing and changes nothing.
 */
let contextStorage: Promise<ContextStorage> | undefined
/** Provider requests in flight, in every deployment's provider (they share the one storage). */
let inFlight = 0

export function confinedHandler(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const loaded = (contextStorage ??= import('oidc-provider/lib/helpers/als.js').then(
    (m: { default: ContextStorage }) => m.default,
    // An internal module of the library: should a release move it, the provider still
    // answers, and only the switching off is lost (the async-context test then fails).
    (): ContextStorage => ({ disable() {} }),
  ))
  return async (req, res) => {
    const storage = await loaded
    inFlight++
    try {
      await handle(req, res)
    } finally {
      if (--inFlight === 0) storage.disable()
    }
  }
}
