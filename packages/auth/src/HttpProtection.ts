/**
 * An MCP server over HTTP as an OAuth 2.1 protected resource: the engine's
 * authentication hook (`HttpAuthentication`) for `StreamableHttpServer` and
 * `SseServer`, built from a {@link ProtectedResource} and a token verifier,
 * and the routes serving its metadata without authentication.
 *
 * Every request to the MCP endpoint needs `Authorization: Bearer <token>`
 * (a token in the query string is refused); a missing one gets 401 with
 * `WWW-Authenticate: Bearer resource_metadata="...", scope="..."`, a token
 * that does not verify 401 `invalid_token`, an unreachable authorization
 * server 503, a token without an operation's scope 403 `insufficient_scope`
 * naming the scopes to ask for. The verified principal is the session's
 * owner (issuer, subject and client: a session cannot be used with another
 * principal's token) and is what handlers read with `Principal.current`.
 *
 * `NodeMcpServer`'s `auth` option takes what {@link make} returns.
 */
import type * as HttpAuthentication from "@effect-mcp/engine/HttpAuthentication"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Layer from "effect/Layer"
import { type AuthError, InsufficientScope } from "./AuthError.ts"
import * as Issuer from "./internal/issuer.ts"
import type { PrincipalShape } from "./Principal.ts"
import * as ProtectedResource from "./ProtectedResource.ts"
import { TokenVerifier, type TokenVerifierShape } from "./TokenVerifier.ts"

/** The RFC 8414 well-known path a 2025-03-26 client asks the MCP server's own origin for. */
export const authorizationServerMetadataPath = "/.well-known/oauth-authorization-server"

/** What {@link make} needs: the protected resource's fields, its verifier, and the 2025-03-26 compatibility route. */
export interface Options extends ProtectedResource.Options {
  /** Verifies the bearer tokens: `JwtVerifier.make(...)`, `IntrospectionVerifier.make(...)`, or your own. */
  readonly verifier: TokenVerifierShape
  /**
   * Also serves the first authorization server's metadata (RFC 8414, else
   * OpenID discovery; fetched on first request and kept for `cacheMaxAge`)
   * at this origin's `/.well-known/oauth-authorization-server`, for clients of
   * the 2025-03-26 revision, which look for it there rather than in the
   * protected resource metadata. An unreachable issuer answers 503. Default false.
   */
  readonly authorizationServerMetadata?:
    | boolean
    | {
        /** Allows an `http:` issuer (a loopback one in tests). */
        readonly allowInsecureRequests?: boolean | undefined
        /** How long a fetched document is served before it is fetched again. Default 10 minutes. */
        readonly cacheMaxAge?: Duration.Input | undefined
        /** How long the fetch may take. Default 5 seconds. */
        readonly timeout?: Duration.Input | undefined
      }
    | undefined
}

/** A protected endpoint, ready for the HTTP server transports. */
export interface HttpProtection {
  /** The resource: its identifier, metadata document and challenges. */
  readonly resource: ProtectedResource.ProtectedResourceShape
  /** The hook for `StreamableHttpServer` / `SseServer`'s `authentication` option. */
  readonly authentication: HttpAuthentication.Authentication
  /**
   * The routes of the metadata documents, served without authentication: the
   * protected resource metadata at its path-suffixed and root well-known
   * paths, and the authorization server's metadata when asked.
   */
  readonly routes: Layer.Layer<never, never, HttpRouter.HttpRouter>
}

/**
 * The stable key of a principal: its issuer, subject and client. Two tokens
 * with the same key are the same caller, whatever their scopes or expiry.
 */
export const ownerOf = (principal: PrincipalShape): string =>
  JSON.stringify([principal.issuer ?? null, principal.subject, principal.clientId ?? null])

const refusal = (answer: { readonly status: number; readonly challenge: string | undefined }) =>
  HttpServerResponse.empty({
    status: answer.status,
    headers: answer.challenge === undefined ? { "cache-control": "no-store" } : { "www-authenticate": answer.challenge }
  })

// Public documents: any page may read them (a browser-based client discovers the authorization server).
const documentHeaders = { "access-control-allow-origin": "*", "cache-control": "public, max-age=3600" }

/**
 * The protection of one MCP endpoint. Throws `InvalidResource` for a
 * resource identifier that is not an absolute http(s) URL without fragment,
 * or no authorization server (configuration, checked at start). Nothing is
 * fetched until the first request.
 *
 * @example
 * ```ts
 * import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
 * import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
 *
 * export const protection = HttpProtection.make({
 *   resource: "https://mcp.example.com/mcp",
 *   authorizationServers: ["https://auth.example.com"],
 *   scopesSupported: ["notes:read", "notes:write"],
 *   verifier: JwtVerifier.make({ issuer: "https://auth.example.com", audience: "https://mcp.example.com/mcp" })
 * })
 * // NodeMcpServer.serveHttp(Server, { port: 3000, auth: protection })
 * ```
 */
export const make = (options: Options): HttpProtection => {
  const resource = ProtectedResource.make(options)
  const verifier = options.verifier
  const answer = (error: AuthError) => refusal(resource.answer(error))

  const authenticate = (
    request: HttpServerRequest.HttpServerRequest
  ): Effect.Effect<HttpAuthentication.Authenticated, HttpServerResponse.HttpServerResponse> =>
    resource.authenticate({ url: request.url, authorization: request.headers["authorization"] }).pipe(
      Effect.provideService(TokenVerifier, verifier),
      Effect.map((principal) => ({ owner: ownerOf(principal), scopes: principal.scopes, value: principal })),
      Effect.mapError(answer)
    )

  const insufficientScope = (authenticated: HttpAuthentication.Authenticated, required: ReadonlyArray<string>) => {
    const granted = authenticated.scopes
    const missing = [...required.filter((scope) => !granted.includes(scope))]
    // The scopes to ask for: the needed ones, then those already granted (MCP 2025-11-25's
    // recommendation: a client that replaces its scope with the challenge's keeps what it had).
    const ask = [...required, ...granted.filter((scope) => !required.includes(scope))]
    return answer(new InsufficientScope({ required: ask, missing }))
  }

  const metadata = HttpServerResponse.jsonUnsafe(resource.metadata, { headers: documentHeaders })
  const asMetadata = options.authorizationServerMetadata
  const asDocument =
    asMetadata === undefined || asMetadata === false
      ? undefined
      : mirror(options.authorizationServers[0]!, asMetadata === true ? {} : asMetadata)
  const routes = HttpRouter.use((router) =>
    Effect.gen(function* () {
      for (const path of resource.metadataPaths) yield* router.add("GET", path as HttpRouter.PathInput, metadata)
      if (asDocument !== undefined) yield* router.add("GET", authorizationServerMetadataPath, asDocument)
    })
  )

  return { resource, authentication: { authenticate, insufficientScope }, routes }
}

/**
 * The issuer's metadata as this origin serves it: fetched on the first
 * request (never at start), kept for `cacheMaxAge`, 503 while it cannot be
 * fetched (a failure is not kept: the next request tries again).
 */
const mirror = (
  issuer: string,
  options: Exclude<Options["authorizationServerMetadata"], boolean | undefined>
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const http: Issuer.HttpOptions = {
    allowInsecureRequests: options.allowInsecureRequests,
    timeoutMs: Duration.toMillis(Duration.fromInputUnsafe(options.timeout ?? Duration.seconds(5)))
  }
  const maxAgeMs = Duration.toMillis(Duration.fromInputUnsafe(options.cacheMaxAge ?? Duration.minutes(10)))
  let cached: { readonly response: HttpServerResponse.HttpServerResponse; readonly until: number } | undefined
  // Concurrent first requests share one fetch.
  let discovery = Issuer.once(() => Issuer.discover(issuer, http))
  return Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (cached !== undefined && cached.until > now) return cached.response
    if (cached !== undefined) {
      cached = undefined
      discovery = Issuer.once(() => Issuer.discover(issuer, http))
    }
    const document = yield* Effect.result(Issuer.call("metadata", discovery))
    if (document._tag === "Failure") {
      yield* Effect.logWarning(`cannot serve the authorization server's metadata: ${document.failure.message}`)
      return HttpServerResponse.empty({ status: 503, headers: { "cache-control": "no-store" } })
    }
    const response = HttpServerResponse.jsonUnsafe(document.success, { headers: documentHeaders })
    cached = { response, until: now + maxAgeMs }
    return response
  })
}
