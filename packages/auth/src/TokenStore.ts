/**
 * Where a client keeps the tokens it obtained, per MCP server (keyed by the
 * server's canonical URL): a service, so a command-line host can keep them in a
 * file and a test can look inside. In memory by default.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The tokens of one resource. */
export interface Tokens {
  /** The access token. */
  readonly accessToken: string
  /** The refresh token, when the authorization server issued one. */
  readonly refreshToken?: string | undefined
  /** When the access token expires, in milliseconds since the epoch (from `expires_in`), when known. */
  readonly expiresAt?: number | undefined
  /** The scopes granted (the answer's `scope`, else those asked for). */
  readonly scope?: ReadonlyArray<string> | undefined
  /** The token type (`bearer`, lower-cased). */
  readonly tokenType: string
  /** The issuer of the authorization server that issued them (a refresh goes there). */
  readonly issuer: string
  /**
   * The client they were issued to, when it is a public client (no secret): a
   * refresh token works for that client only, and a client that registered
   * afresh (dynamic registration after a restart) refreshes as that one.
   */
  readonly clientId?: string | undefined
}

/** Keeps tokens per MCP server. */
export interface TokenStoreShape {
  /** The tokens kept for the MCP server `server`, if any. */
  readonly get: (server: string) => Effect.Effect<Tokens | undefined>
  /** Keeps `tokens` for `server`, replacing what was kept. */
  readonly set: (server: string, tokens: Tokens) => Effect.Effect<void>
  /** Forgets the tokens of `server` (a refused refresh token, a log-out). */
  readonly remove: (server: string) => Effect.Effect<void>
}

/** The token store of an OAuth client. */
export class TokenStore extends Context.Service<TokenStore, TokenStoreShape>()("@effect-mcp/auth/TokenStore") {}

/** A store in this process's memory: tokens are lost when it exits. */
export const makeMemory = (): TokenStoreShape => {
  const tokens = new Map<string, Tokens>()
  return {
    get: (resource) => Effect.sync(() => tokens.get(resource)),
    set: (resource, value) =>
      Effect.sync(() => {
        tokens.set(resource, value)
      }),
    remove: (resource) =>
      Effect.sync(() => {
        tokens.delete(resource)
      })
  }
}

/** {@link makeMemory} as a Layer (a new, empty store per build). */
export const layerMemory: Layer.Layer<TokenStore> = Layer.sync(TokenStore, makeMemory)
