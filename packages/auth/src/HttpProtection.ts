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
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Layer from "effect/Layer"
import { type AuthError, InsufficientScope, type VerifierUnavailable } from "./AuthError.ts"
import * as Issuer from "./internal/issuer.ts"
import type { PrincipalShape } from "./Principal.ts"
import * as ProtectedResource from "./ProtectedResource.ts"
import { TokenVerifier, type TokenVerifierShape } from "./TokenVerifier.ts"

/** The RFC 8414 well-known path a 2025-03-26 client asks the MCP server's own origin for. */
export const authorizationServerMetadataPath = "/.well-known/oauth-authorization-server"

/**
 * The 2025-03-26 default endpoints ("Fallbacks for Servers without Metadata
 * Discovery"): the paths at the MCP server's origin a client of that
 * revision uses when it finds no metadata, each with the method it is used
 * with and the issuer metadata's field it stands for. With
 * `authorizationServerMetadata` they answer 307 to the issuer's endpoint.
 */
export const defaultEndpoints: ReadonlyArray<{
  readonly method: "GET" | "POST"
  readonly path: "/authorize" | "/token" | "/register"
  readonly field: "authorization_endpoint" | "token_endpoint" | "registration_endpoint"
}> = [
  { method: "GET", path: "/authorize", field: "authorization_endpoint" },
  { method: "POST", path: "/token", field: "token_endpoint" },
  { method: "POST", path: "/register", field: "registration_endpoint" }
]

/** What {@link make} needs: the protected resource's fields, its verifier, and the 2025-03-26 compatibility route. */
export interface Options extends ProtectedResource.Options {
  /** Verifies the bearer tokens: `JwtVerifier.make(...)`, `IntrospectionVerifier.make(...)`, or your own. */
  readonly verifier: TokenVerifierShape
  /**
   * Serves the 2025-03-26 shape for clients of that revision, which take the
   * MCP server's origin for the authorization server: the first authorization
   * server's metadata (RFC 8414, else OpenID discovery; fetched on first
   * request and kept for `cacheMaxAge`) at this origin's
   * `/.well-known/oauth-authorization-server`, served as the issuer wrote it
   * (its `issuer` stays the issuer's: the tokens and the RFC 9207 `iss` of its
   * redirects name it), and the default endpoints `/authorize`, `/token` and
   * `/register` answering 307 to the issuer's (method, body and query kept).
   * An unreachable issuer answers 503; an issuer without registration 404 at
   * `/register`. Default false.
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
        /** The most bytes of the issuer's metadata read. Default 1 MiB. */
        readonly maxResponseBytes?: number | undefined
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
 * Every `Authorization` header of a request. Node keeps only the first of a
 * repeated `Authorization` in `headers` (it drops the rest), so on Node the
 * raw header list is read: a request with two must be refused (400), not
 * served with whichever came first.
 */
const authorizationOf = (request: HttpServerRequest.HttpServerRequest): string | ReadonlyArray<string> | undefined => {
  const raw = (request.source as { readonly rawHeaders?: unknown } | undefined)?.rawHeaders
  if (!Array.isArray(raw)) return request.headers["authorization"]
  const values: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() === "authorization") values.push(String(raw[i + 1]))
  }
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values
}

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
    resource.authenticate({ url: request.url, authorization: authorizationOf(request) }).pipe(
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
  const issuer =
    asMetadata === undefined || asMetadata === false
      ? undefined
      : mirror(options.authorizationServers[0]!, asMetadata === true ? {} : asMetadata)
  const routes = HttpRouter.use((router) =>
    Effect.gen(function* () {
      for (const path of resource.metadataPaths) yield* router.add("GET", path as HttpRouter.PathInput, metadata)
      if (issuer === undefined) return
      yield* router.add("GET", authorizationServerMetadataPath, issuer.response)
      for (const endpoint of defaultEndpoints) {
        yield* router.add(endpoint.method, endpoint.path, (request) =>
          redirect(issuer.document, endpoint.field, request)
        )
      }
    })
  )

  return { resource, authentication: { authenticate, insufficientScope }, routes }
}

/**
 * The issuer's metadata as this origin serves it: fetched on the first
 * request (never at start), kept for `cacheMaxAge`; a failure is not kept
 * (the next request tries again). `response` is the document's answer, 503
 * while it cannot be fetched.
 */
const mirror = (issuer: string, options: Exclude<Options["authorizationServerMetadata"], boolean | undefined>) => {
  const http: Issuer.HttpOptions = {
    allowInsecureRequests: options.allowInsecureRequests,
    timeoutMs: Duration.toMillis(Duration.fromInputUnsafe(options.timeout ?? Duration.seconds(5))),
    maxResponseBytes: options.maxResponseBytes
  }
  const maxAgeMs = Duration.toMillis(Duration.fromInputUnsafe(options.cacheMaxAge ?? Duration.minutes(10)))
  type Cached = { readonly document: Record<string, unknown>; readonly response: HttpServerResponse.HttpServerResponse }
  let cached: (Cached & { readonly until: number }) | undefined
  // Concurrent first requests share one fetch.
  let discovery = Issuer.once(() => Issuer.discover(issuer, http))
  const document: Effect.Effect<Cached, VerifierUnavailable> = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (cached !== undefined && cached.until > now) return cached
    if (cached !== undefined) {
      cached = undefined
      discovery = Issuer.once(() => Issuer.discover(issuer, http))
    }
    const fetched = yield* Effect.result(Issuer.call("metadata", discovery))
    if (fetched._tag === "Failure") {
      yield* Effect.logWarning(`cannot serve the authorization server's metadata: ${fetched.failure.message}`)
      return yield* fetched.failure
    }
    const response = HttpServerResponse.jsonUnsafe(fetched.success, { headers: documentHeaders })
    cached = { document: fetched.success as Record<string, unknown>, response, until: now + maxAgeMs }
    return cached
  })
  const response = document.pipe(
    Effect.map((found) => found.response),
    Effect.catch(() => Effect.succeed(unavailable))
  )
  return { document, response }
}

const unavailable = HttpServerResponse.empty({ status: 503, headers: { "cache-control": "no-store" } })

/**
 * A 2025-03-26 default endpoint: 307 (the method and body are sent again,
 * to the issuer) to the issuer's endpoint named by `field`, with the
 * request's query parameters added (the authorization request's). 404 when
 * the issuer has no such endpoint, 503 while its metadata cannot be fetched.
 */
const redirect = (
  document: Effect.Effect<{ readonly document: Record<string, unknown> }, VerifierUnavailable>,
  field: (typeof defaultEndpoints)[number]["field"],
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  document.pipe(
    Effect.map(({ document }) => {
      const endpoint = document[field]
      const target = typeof endpoint === "string" && URL.canParse(endpoint) ? new URL(endpoint) : undefined
      // Only to an http(s) URL: a document's other schemes would be the server's redirect, not the issuer's.
      if (target === undefined || (target.protocol !== "https:" && target.protocol !== "http:")) {
        return HttpServerResponse.empty({ status: 404 })
      }
      const query = new URL(request.url, "http://localhost").searchParams
      for (const [name, value] of query) target.searchParams.append(name, value)
      // Readable by any page, like the documents: a browser-based client's fetch follows it to the issuer.
      return HttpServerResponse.empty({
        status: 307,
        headers: { location: target.href, "cache-control": "no-store", "access-control-allow-origin": "*" }
      })
    }),
    Effect.catch(() => Effect.succeed(unavailable))
  )
