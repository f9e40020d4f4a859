// Loads `oidc-provider` once. Its current release line (9) supports Node 22 and later and
// prints an unstructured "Unsupported runtime" warning on stderr when imported on Node 20,
// which kigo still supports and tests (docs/oidc.md#node-versions). That one line is held
// back while the library loads and handed to the gateway's logger instead, as a
// structured line; any other output of the library passes through untouched.
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
