// The gateway's identity store (docs/gateway.md#topology, docs/gateway.md#the-oauth-provider-and-the-account-pages): users, OAuth consumers, tokens. One SQL
// schema (`kigo_gateway`) over the embedded or the PostgreSQL engine (src/common/sql.ts).
// Secrets never leave this module in a stored form: login passwords are scrypt hashes;
// API passwords, consumer secrets and token secrets are AES-256-GCM ciphertexts under a
// key derived from KIGO_SECRET_KEY, and come out decrypted only where a verifier needs them.

import type { Scope } from '../domain/identifiers.js'
import type { PreviousSecret } from '../domain/secret-rotation.js'

export interface User {
  id: string
  name: string
  createdAt: Date
}

/** A user with the operator's contact address for them (docs/gateway.md#the-usage-report: the report as an outreach list). */
export interface UserContact extends User {
  email: string | null
}

export interface Consumer {
  key: string
  name: string
  ownerId: string
  scopes: Scope[]
  /** Registered callback URL, or null (any http/https callback or oob accepted). */
  callbackUrl: string | null
  /** The application's home page, linked on the consent page; null when none was given. */
  homeUrl: string | null
  createdAt: Date
}

/** What the owner of an application may change after registering it (the scopes stay as registered). */
export interface ConsumerDetails {
  name: string
  callbackUrl: string | null
  homeUrl: string | null
}

export interface AccessToken {
  token: string
  consumerKey: string
  userId: string
  scopes: Scope[]
  createdAt: Date
  revokedAt: Date | null
}

/**
 * What the verifiers load (Basic, WSSE and OAuth-signed requests, through
 * CachedCredentialLookup) and the account sign-in checks: lookups of users' passwords,
 * consumers and access tokens, nothing that changes them.
 */
export interface CredentialRepository {
  getUser(id: string): Promise<User | null>
  /** The user when the login password matches; the same scrypt work is done for an unknown id. */
  verifyLoginPassword(id: string, password: string): Promise<User | null>
  /** The user and the decrypted API password (Basic and WSSE need the plain value). */
  getApiPassword(id: string): Promise<{ user: User; apiPassword: string } | null>
  /** The consumer and its secret, with the secret a rotation replaced while it is kept (`previous`, absent when none; it may have expired). */
  getConsumer(key: string): Promise<{ consumer: Consumer; secret: string; previous?: PreviousSecret } | null>
  getAccessToken(token: string): Promise<{ token: AccessToken; secret: string } | null>
}

/** What the OAuth provider keeps (docs/gateway.md#the-oauth-provider-and-the-account-pages): request tokens, account sessions, and the user's authorizations. */
export interface ProviderRepository {
  /** Generates the request token and its secret. Throws NotFound for an unknown consumer, InvalidInput for scopes beyond it. */
  createRequestToken(input: { consumerKey: string; callback: string; scopes: Scope[]; expiresAt: Date; now: Date }): Promise<{ requestToken: RequestToken; secret: string }>
  getRequestToken(token: string): Promise<{ requestToken: RequestToken; secret: string } | null>
  /** Records the user's approval and returns the new verifier; null unless the token is pending and unexpired at `now`. */
  approveRequestToken(token: string, userId: string, now: Date): Promise<{ verifier: string } | null>
  /** Records the user's refusal; false unless the token is pending and unexpired at `now`. */
  denyRequestToken(token: string, userId: string, now: Date): Promise<boolean>
  /**
   * Exchanges an approved request token and its verifier for an access token carrying
   * the approved scopes, exactly once (RFC 5849 §2.3): concurrent exchanges get one token.
   */
  exchangeRequestToken(token: string, verifier: string, now: Date): Promise<ExchangeResult>

  /** A new session; the plain id (for the cookie) and CSRF token are returned only here. */
  createWebSession(input: { userId: string | null; expiresAt: Date; now: Date }): Promise<{ id: string; csrfToken: string }>
  /** The session when it exists and has not expired at `now`. */
  getWebSession(id: string, now: Date): Promise<WebSession | null>
  deleteWebSession(id: string): Promise<void>
  /**
   * Holds `value` (sealed) beside the session under `slot` until `expiresAt`, replacing
   * what it held: a new secret waiting for the one page that shows it.
   */
  holdShownSecret(id: string, slot: string, value: string, expiresAt: Date): Promise<void>
  /** The value held under `slot`, cleared as it is read (once), or null when none is held or it expired at `now`. */
  takeShownSecret(id: string, slot: string, now: Date): Promise<string | null>

  /** Applications holding unrevoked access tokens of the user, with the scopes those tokens carry. */
  listAuthorizedApplications(userId: string): Promise<AuthorizedApplication[]>
  /** Revokes every access token the user gave the application; returns how many were revoked. */
  revokeUserTokensForConsumer(userId: string, consumerKey: string): Promise<number>
  /** How many people hold an unrevoked access token of the application (one count, never the rows). */
  countApplicationUsers(consumerKey: string): Promise<number>
}

/**
 * Changes to users, applications and access tokens: the operator API (and the kigo CLI
 * through it) for anyone, the account area for the signed-in user's own. Administration
 * reads what it changes, so it includes the lookups.
 */
export interface IdentityAdministration extends CredentialRepository {
  /** Throws Conflict when the id is taken. */
  createUser(input: { id: string; name: string; password: string; apiPassword: string }): Promise<User>
  /** A new display name; the old one and the user, or null when there is no such user. Throws InvalidInput for a bad name. */
  setUserName(id: string, name: string): Promise<{ before: string; user: User } | null>
  /** Returns false when there is no such user. */
  setApiPassword(id: string, apiPassword: string): Promise<boolean>
  /** Replaces the login password (scrypt hash); false when there is no such user. */
  setLoginPassword(id: string, password: string): Promise<boolean>
  /** Ends the user's account sessions, all but `keepSessionId` when given; returns how many ended. */
  endUserSessions(userId: string, keepSessionId?: string): Promise<number>
  /** Every user with the optional contact e-mail, by ID. */
  listUsers(): Promise<UserContact[]>
  /** The user's contact e-mail; null when none is set or there is no such user. */
  getUserEmail(id: string): Promise<string | null>
  /** The contact e-mail (null to clear); false when there is no such user. Throws InvalidInput for a malformed address. */
  setUserEmail(id: string, email: string | null): Promise<boolean>

  /** Generates the consumer key and secret. Throws NotFound when the owner does not exist. */
  createConsumer(input: { name: string; ownerId: string; scopes: Scope[]; callbackUrl: string | null; homeUrl?: string | null }): Promise<{ consumer: Consumer; secret: string }>
  /**
   * New name, callback and home page, checked as a registration checks them (InvalidInput);
   * the consumer before and after, or null when there is no such consumer.
   */
  updateConsumer(key: string, details: ConsumerDetails): Promise<{ before: Consumer; after: Consumer } | null>
  listConsumers(ownerId?: string): Promise<Consumer[]>
  /**
   * A new consumer secret; null when there is no such consumer. Without an overlap the old
   * one stops verifying at once and any previous secret is forgotten; with one, the old
   * secret becomes the previous secret until `now` + the overlap, replacing any earlier one
   * (docs/gateway.md#rotating-a-secret). `previousUntil` is that expiry, or null.
   */
  rotateConsumerSecret(key: string, options?: { overlapSeconds?: number; now?: Date }): Promise<{ consumer: Consumer; secret: string; previousUntil: Date | null } | null>
  /** Deletes the consumer with its request and access tokens; null when there is no such consumer. */
  deleteConsumer(key: string): Promise<{ consumer: Consumer; tokens: number } | null>

  /** Generates the token and its secret. Throws NotFound for an unknown consumer or user. */
  createAccessToken(input: { consumerKey: string; userId: string; scopes: Scope[] }): Promise<{ token: AccessToken; secret: string }>
  /** Returns false when there is no such token; revoking twice is true both times. */
  revokeAccessToken(token: string): Promise<boolean>
  listAccessTokens(filter: { userId?: string; consumerKey?: string }): Promise<AccessToken[]>
}

/** The whole identity store, as opened by openIdentityStore: one SQL class serves every audience. */
export interface IdentityStore extends CredentialRepository, ProviderRepository, IdentityAdministration {
  /** Users whose IDs are now reserved (docs/api.md#pages), by ID. */
  usersWithReservedIds(): Promise<string[]>
  ping(): Promise<void>
  close(): Promise<void>
}

export type RequestTokenState = 'pending' | 'approved' | 'denied' | 'used'

export interface RequestToken {
  token: string
  consumerKey: string
  /** The client's oauth_callback: an http/https URL or `oob`. */
  callback: string
  scopes: Scope[]
  state: RequestTokenState
  /** The user who decided; null while pending. */
  userId: string | null
  createdAt: Date
  expiresAt: Date
}

export type ExchangeResult =
  | { ok: true; token: AccessToken; secret: string }
  | { ok: false; reason: 'unknown' | 'expired' | 'pending' | 'denied' | 'used' | 'verifier_mismatch' }

export interface WebSession {
  /** The signed-in user; null for a visitor who has not signed in. */
  user: User | null
  csrfToken: string
  createdAt: Date
  expiresAt: Date
}

export interface AuthorizedApplication {
  consumer: Consumer
  /** Union of the scopes of the user's unrevoked tokens for this application. */
  scopes: Scope[]
  /** When the earliest of those tokens was issued. */
  authorizedAt: Date
  tokens: number
}

export class Conflict extends Error {
  override name = 'Conflict'
}

export class NotFound extends Error {
  override name = 'NotFound'
}

/**
 * The identity store's methods about OAuth 1.0a applications and their tokens: kept by the
 * OAuth 1.0a feature's store (src/gateway/oauth1/store.ts), which the identity store is
 * given when it is opened (`applications`) and answers these calls through.
 */
export const applicationStoreMethods = [
  'createConsumer',
  'getConsumer',
  'listConsumers',
  'updateConsumer',
  'rotateConsumerSecret',
  'deleteConsumer',
  'createAccessToken',
  'getAccessToken',
  'revokeAccessToken',
  'listAccessTokens',
  'createRequestToken',
  'getRequestToken',
  'approveRequestToken',
  'denyRequestToken',
  'exchangeRequestToken',
  'listAuthorizedApplications',
  'revokeUserTokensForConsumer',
  'countApplicationUsers',
] as const

/** The applications and tokens part of the identity store. */
export type ApplicationStore = Pick<IdentityStore, (typeof applicationStoreMethods)[number]>
