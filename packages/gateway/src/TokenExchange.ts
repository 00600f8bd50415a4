/**
 * RFC 8693 token exchange for upstreams that act for the gateway's caller:
 * the gateway trades the downstream caller's verified access token, at the
 * upstream's authorization server, for a token for that upstream (`resource`:
 * the upstream, as its protected resource metadata names it), and calls the
 * upstream with it. The upstream learns who the caller is from a token issued
 * for it; the caller's own token never reaches it.
 *
 * The host keeps one connection per upstream, shared by every caller; an
 * upstream given a token exchange (`Gateway.Options.tokenExchange`) is also
 * reached by one connection per principal, made on its first call with a
 * token exchanged for that principal's, and closed when it has been idle for
 * `idleTimeToLive`. Calls (`tools/call`, `prompts/get`, `resources/read`,
 * `completion/complete`) go through the caller's connection; the shared one
 * (with the upstream's `credentials`, e.g. the gateway's own client
 * credentials token) lists the catalog and follows subscriptions. A request
 * without a verified token (no principal, or a verifier not wrapped by
 * `keepingTokens`) is refused, never sent with the gateway's identity.
 *
 * The gateway needs the caller's token itself, not only what it says: wrap the
 * downstream verifier with `keepingTokens`.
 *
 * @example
 * ```ts
 * import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
 * import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
 * import * as TokenExchange from "@effect-mcp/gateway/TokenExchange"
 *
 * export const auth = HttpProtection.make({
 *   resource: "https://gateway.example.com/mcp",
 *   authorizationServers: ["https://auth.example.com"],
 *   verifier: TokenExchange.keepingTokens(
 *     JwtVerifier.make({ issuer: "https://auth.example.com", audience: "https://gateway.example.com/mcp" })
 *   )
 * })
 * export const tokenExchange = {
 *   notes: { clientId: "gateway", clientSecretEnv: "GATEWAY_CLIENT_SECRET", scope: ["notes:read"] }
 * } satisfies { readonly [upstream: string]: TokenExchange.Options }
 * ```
 */
import * as Discovery from "@effect-mcp/auth/Discovery"
import type * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as oauth from "oauth4webapi"
import * as UpstreamOAuth from "./UpstreamOAuth.ts"

/**
 * How the gateway exchanges tokens for one upstream: its client at the upstream's authorization server (as for
 * `UpstreamOAuth.clientCredentials`; `scope` is sent only when given), and the caller's connections.
 */
export interface Options extends UpstreamOAuth.ClientCredentialsOptions {
  /** An `audience` parameter, for authorization servers that name targets so. Default: none (`resource` only). */
  readonly audience?: string | undefined
  /** How long a caller's connection stays open without calls. Default 1 minute. */
  readonly idleTimeToLive?: Duration.Input | undefined
}

/** RFC 8693's grant type. */
export const grantType = "urn:ietf:params:oauth:grant-type:token-exchange"

/** RFC 8693's token type of an access token (what is traded, and what is asked for). */
export const accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

// The token each verified principal was verified from, by the principal object the verifier returned.
const tokens = new WeakMap<object, Redacted.Redacted<string>>()

/**
 * `verifier`, keeping each token it verifies with the principal it returns, so
 * that the gateway can exchange it (see `subjectTokenOf`); what it verifies is unchanged.
 */
export const keepingTokens = (verifier: TokenVerifier.TokenVerifierShape): TokenVerifier.TokenVerifierShape => ({
  verify: (token) =>
    Effect.tap(verifier.verify(token), (principal) => Effect.sync(() => tokens.set(principal, Redacted.make(token))))
})

/** The token `principal` (a `Transport.Authenticated`'s `value`) was verified from, when `keepingTokens` kept it. */
export const subjectTokenOf = (principal: unknown): Redacted.Redacted<string> | undefined =>
  typeof principal === "object" && principal !== null ? tokens.get(principal) : undefined

/** A token an exchange gave, and how long it is valid when the authorization server said (`expires_in`). */
export interface Exchanged {
  readonly token: Redacted.Redacted<string>
  readonly expiresIn: Duration.Duration | undefined
}

/** An exchange that failed: the step and what the authorization server said (never a token or a secret). */
export interface ExchangeFailure {
  readonly message: string
}

const secretOf = (options: Options): Effect.Effect<string, ExchangeFailure> =>
  UpstreamOAuth.clientSecretOf(options).pipe(
    Effect.mapError((message) => ({ message })),
    Effect.flatMap((secret) =>
      secret === undefined ? Effect.fail({ message: "no client secret" }) : Effect.succeed(secret)
    )
  )

const describe = (error: unknown): string =>
  error instanceof oauth.ResponseBodyError
    ? `${error.error}${error.error_description === undefined ? "" : `: ${error.error_description}`}`
    : error instanceof Error
      ? error.message
      : String(error)

/**
 * An exchanger for the upstream at `url`: its authorization server is
 * discovered once (protected resource metadata, then the server's metadata),
 * then each call trades `subjectToken` for a token for the upstream.
 */
export const exchanger = (
  url: string,
  options: Options
): ((subjectToken: Redacted.Redacted<string>) => Effect.Effect<Exchanged, ExchangeFailure>) => {
  const http = { allowInsecureRequests: options.allowInsecureRequests }
  // Discovered on the first exchange and kept; a failed discovery is tried again by the next one.
  let found: Discovery.Discovered | undefined
  const discovered = Effect.suspend(() =>
    found !== undefined
      ? Effect.succeed(found)
      : Discovery.discover(url, undefined, http).pipe(
          Effect.tap((d) => Effect.sync(() => (found = d))),
          Effect.mapError((error) => ({ message: error.message }))
        )
  )
  const requestOptions = options.allowInsecureRequests === true ? { [oauth.allowInsecureRequests]: true } : {}
  return (subjectToken) =>
    Effect.gen(function* () {
      const { authorizationServer, resource } = yield* discovered
      const secret = yield* secretOf(options)
      const client: oauth.Client = { client_id: options.clientId }
      const auth =
        options.authMethod === "client_secret_post" ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret)
      const parameters: Record<string, string> = {
        subject_token: Redacted.value(subjectToken),
        subject_token_type: accessTokenType,
        requested_token_type: accessTokenType,
        resource,
        ...(options.audience === undefined ? {} : { audience: options.audience }),
        ...(options.scope === undefined ? {} : { scope: options.scope.join(" ") })
      }
      const answer = yield* Effect.tryPromise({
        try: async () =>
          oauth.processGenericTokenEndpointResponse(
            authorizationServer,
            client,
            await oauth.genericTokenEndpointRequest(
              authorizationServer,
              client,
              auth,
              grantType,
              parameters,
              requestOptions
            )
          ),
        catch: (error) => ({ message: `token exchange: ${describe(error)}` })
      })
      return {
        token: Redacted.make(answer.access_token),
        expiresIn: answer.expires_in === undefined ? undefined : Duration.seconds(answer.expires_in)
      }
    })
}
