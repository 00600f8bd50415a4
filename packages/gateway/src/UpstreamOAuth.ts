/**
 * OAuth credentials for upstreams: the gateway as an OAuth client of an
 * upstream that is a protected resource, with a token of its own (the
 * client credentials grant, SEP-1046), never the downstream caller's.
 *
 * For each connection to the upstream, the credential finds the upstream's
 * authorization server from its protected resource metadata (RFC 9728),
 * asks it for a token for the upstream (RFC 8707 `resource`) with the
 * gateway's pre-registered client id and secret, and sends it as
 * `Authorization: Bearer`. A token is kept while it is valid and reused by
 * the next connection; an expired one is replaced by a new grant. Grants
 * are made one at a time per credential: connections made at once (several
 * upstreams sharing the credential, say) wait for one grant and share its
 * token, rather than each asking for its own. A token
 * that expires while a connection is open is refused by the upstream, which
 * ends the connection: the host reconnects (its reconnect schedule) with a
 * new token.
 *
 * @example
 * ```ts
 * import * as Credentials from "@effect-mcp/gateway/Credentials"
 * import * as UpstreamOAuth from "@effect-mcp/gateway/UpstreamOAuth"
 *
 * export const credentials: Credentials.ByServer = {
 *   search: UpstreamOAuth.clientCredentials({
 *     clientId: "gateway",
 *     clientSecretEnv: "SEARCH_CLIENT_SECRET",
 *     scope: ["search:read"]
 *   })
 * }
 * ```
 */
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import { RegistrationFailed } from "@effect-mcp/auth/OAuthClientError"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Credentials from "./Credentials.ts"

/** The gateway's client at the upstream's authorization server. */
export interface ClientCredentialsOptions {
  /** The client id the authorization server's operator gave the gateway. */
  readonly clientId: string
  /** Its secret, given here... */
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  /** ...or read from this environment variable (through effect's `ConfigProvider`) for each grant. */
  readonly clientSecretEnv?: string | undefined
  /** How the client authenticates at the token endpoint. Default `client_secret_basic`. */
  readonly authMethod?: "client_secret_basic" | "client_secret_post" | undefined
  /** The scopes to ask for. Default: those the upstream's metadata lists. */
  readonly scope?: ReadonlyArray<string> | undefined
  /** Allows `http:` URLs for the metadata and the authorization server (loopback servers in tests). */
  readonly allowInsecureRequests?: boolean | undefined
}

/** The client's secret: given, or read from its variable now; undefined when neither is set. */
export const clientSecretOf = (options: ClientCredentialsOptions): Effect.Effect<string | undefined, string> =>
  options.clientSecretEnv !== undefined
    ? Config.Redacted(options.clientSecretEnv).pipe(
        Effect.map(Redacted.value),
        Effect.mapError(() => `the variable ${options.clientSecretEnv} is not set`)
      )
    : Effect.succeed(
        options.clientSecret === undefined || typeof options.clientSecret === "string"
          ? options.clientSecret
          : Redacted.value(options.clientSecret)
      )

const failed = (name: string, message: string) =>
  new Transport.TransportError({ reason: "Io", message: `${JSON.stringify(name)}: OAuth token: ${message}` })

/**
 * `Authorization: Bearer <token>` with a token of the gateway's own from the
 * upstream's authorization server (the client credentials grant), obtained
 * as each connection is made. A grant that fails fails the connection with
 * the authorization server's error code (never a secret or a token).
 */
export const clientCredentials = (options: ClientCredentialsOptions): Credentials.Credential => {
  const secret = clientSecretOf(options)
  // Tokens are kept per upstream URL in one store, across connections.
  const store = TokenStore.makeMemory()
  // The gateway's registration is its pre-registered client, with the secret read for each grant (a rotated one is
  // used from the next grant on).
  const registration: ClientRegistration.ClientRegistrationShape = {
    register: (server) =>
      secret.pipe(
        Effect.mapError((detail) => new RegistrationFailed({ issuer: server.issuer, detail })),
        Effect.map((clientSecret) => ({
          clientId: options.clientId,
          clientSecret,
          authMethod: options.authMethod ?? "client_secret_basic"
        }))
      )
  }
  // One client for every connection made with this credential, made on the first: its lock makes the grants one at
  // a time, so connections asking at once (no token yet, or an expired one) cost one grant, which the others then
  // find in the store; a client per connection shared the store but not the lock, and each made its own grant.
  let shared: OAuthClient.OAuthClientShape | undefined
  const client = Effect.suspend(() =>
    shared !== undefined
      ? Effect.succeed(shared)
      : OAuthClient.make({
          grant: "client_credentials",
          scope: options.scope,
          allowInsecureRequests: options.allowInsecureRequests
        }).pipe(
          Effect.provideService(TokenStore.TokenStore, store),
          Effect.provideService(ClientRegistration.ClientRegistration, registration),
          // Assigned once made (nothing yields in between): a client made meanwhile by another connection is dropped.
          Effect.map((made) => (shared ??= made))
        )
  )
  const tokenFor = (url: string) =>
    Effect.gen(function* () {
      // Read first, as before any grant: a missing variable fails the connection naming it, with nothing sent.
      yield* secret
      const oauth = yield* client
      const stored = yield* Effect.mapError(oauth.accessToken(url), (error) => error.message)
      if (Option.isSome(stored)) return stored.value
      // No challenge to read: discovery starts from the upstream's well-known metadata.
      return yield* Effect.mapError(oauth.authorize(url, undefined), (error) => error.message)
    })
  return Credentials.fromEffect("authorization", (name, server) =>
    tokenFor(server.url).pipe(
      Effect.map((token) => Redacted.make(`Bearer ${token}`)),
      Effect.mapError((message) => failed(name, message))
    )
  )
}
