// The parts of `oidc-provider` (which ships no type declarations) that kigo uses,
// after the library's own configuration documentation and lib/provider.js.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export type AdapterPayload = Record<string, unknown>

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>
    find(id: string): Promise<AdapterPayload | undefined>
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>
    findByUid(uid: string): Promise<AdapterPayload | undefined>
    consume(id: string): Promise<void>
    destroy(id: string): Promise<void>
    revokeByGrantId(grantId: string): Promise<void>
  }

  export interface ClientView {
    clientId: string
    clientName?: string
    redirectUris?: string[]
    postLogoutRedirectUris?: string[]
    grantTypeAllowed(type: string): boolean
  }

  export interface KoaContextWithOIDC {
    req: IncomingMessage
    res: ServerResponse
    status: number
    type: string
    body: unknown
    host: string
    set(name: string, value: string): void
    response: { get(name: string): string | number | string[] | undefined }
    state: Record<string | symbol, unknown>
    cookies: { get(name: string, options?: { signed?: boolean }): string | undefined }
    oidc: {
      client?: ClientView
      session?: { accountId?: string }
      route?: string
      params?: Record<string, unknown>
    }
  }

  export interface Account {
    accountId: string
    claims(use: string, scope: string): Promise<Record<string, unknown>>
  }

  export interface Configuration {
    adapter?: new (name: string) => Adapter
    findAccount?: (ctx: KoaContextWithOIDC, sub: string, token?: unknown) => Promise<Account | undefined>
    claims?: Record<string, string[]>
    scopes?: string[]
    responseTypes?: string[]
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: ClientView) => boolean }
    allowOmittingSingleRegisteredRedirectUri?: boolean
    clientDefaults?: Record<string, unknown>
    features?: Record<string, Record<string, unknown>>
    jwks?: { keys: Array<Record<string, unknown>> }
    cookies?: { keys?: string[]; long?: Record<string, unknown>; short?: Record<string, unknown>; names?: Record<string, string> }
    interactions?: { policy?: unknown; url?: (ctx: KoaContextWithOIDC, interaction: { uid: string }) => string }
    routes?: Record<string, string>
    ttl?: Record<string, number>
    renderError?: (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }, error: Error) => Promise<void>
    issueRefreshToken?: (ctx: KoaContextWithOIDC, client: ClientView, code: { scopes: Set<string>; resource?: string | string[] }) => Promise<boolean>
    [key: string]: unknown
  }

  export interface InteractionDetails {
    uid: string
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> }
    params: Record<string, unknown> & { client_id?: string; scope?: string; redirect_uri?: string }
    session?: { accountId?: string; uid?: string }
    grantId?: string
    lastSubmission?: Record<string, unknown>
  }

  export class Grant {
    constructor(init: { accountId: string; clientId: string })
    static find(id: string): Promise<Grant | undefined>
    addOIDCScope(scope: string): void
    addOIDCClaims(claims: string[]): void
    addResourceScope(resource: string, scope: string): void
    save(): Promise<string>
    accountId?: string
    clientId?: string
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration)
    readonly issuer: string
    proxy: boolean
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>
    interactionResult(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<string>
    on(event: string, listener: (...args: never[]) => void): this
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this
    Grant: typeof Grant
    Client: {
      find(id: string): Promise<ClientView | undefined>
      /** The library's client class; its one comparison of a presented client secret with the client's. */
      prototype: { compareClientSecret(this: ClientView, actual: string): Promise<boolean> | boolean }
    }
  }
  export { Provider }

  export const errors: Record<string, new (...args: never[]) => Error>

  export const interactionPolicy: {
    base(): { get(name: string): { checks: { add(check: unknown): void } } | undefined }
    Check: { new (reason: string, description: string, check: (ctx: KoaContextWithOIDC) => boolean | Promise<boolean>): unknown; REQUEST_PROMPT: boolean; NO_NEED_TO_PROMPT: boolean }
  }
}

// The library's request context (lib/helpers/als.js), switched off between its requests (library.ts).
declare module 'oidc-provider/lib/helpers/als.js' {
  import type { AsyncLocalStorage } from 'node:async_hooks'

  const storage: AsyncLocalStorage<unknown>
  export default storage
}
