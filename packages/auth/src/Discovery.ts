/**
 * What a client learns after a 401 from an MCP server, before it can ask for
 * a token: the protected resource metadata (RFC 9728) and the metadata of the
 * authorization server it names (RFC 8414 or OpenID Connect discovery, at the
 * well-known URLs MCP 2025-11-25 lists). Every answer is read up to
 * `maxResponseBytes`.
 *
 * The resource metadata is looked for at the challenge's
 * `resource_metadata` URL, then at the well-known URLs (path-suffixed, then
 * the origin's root); its `resource` must be the server's URL (or a prefix of
 * it at the same origin, as servers commonly name their origin), or the
 * client would follow an impostor's `authorization_servers`. A server
 * without resource metadata is a 2025-03-26 server: its origin is the
 * authorization server, and when that has no metadata either, the default
 * endpoints `/authorize`, `/token` and `/register` at the origin are used.
 */
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as oauth from "oauth4webapi"
import * as Challenge from "./Challenge.ts"
import * as Http from "./internal/clientHttp.ts"
import * as Issuer from "./internal/issuer.ts"
import { DiscoveryFailed } from "./OAuthClientError.ts"
import * as ProtectedResourceMetadata from "./ProtectedResourceMetadata.ts"

/** How discovery talks to servers. */
export interface Options {
  /** How long each request may take; 10 seconds by default. */
  readonly timeout?: Duration.Input | undefined
  /** Allows `http:` URLs (loopback servers in tests); `https:` only otherwise. */
  readonly allowInsecureRequests?: boolean | undefined
  /**
   * The most bytes of a response body read (metadata documents; with the
   * `OAuthClient`, registration and token answers too); 1 MiB by default. A
   * larger answer fails, naming its URL and the limit, once that many bytes
   * have arrived: the rest is not read.
   */
  readonly maxResponseBytes?: number | undefined
  /**
   * The MCP revision named in the `MCP-Protocol-Version` header of every
   * discovery request (2025-03-26 on: clients MUST send it, so that a server
   * can answer for that revision); {@link defaultProtocolVersion} by default.
   */
  readonly protocolVersion?: string | undefined
}

/**
 * The revision discovery names when none is given: the newest whose
 * authorization this client implements (protected resource metadata, RFC
 * 9728, with the 2025-03-26 fallbacks).
 */
export const defaultProtocolVersion = "2025-11-25"

/** The header every discovery request carries. */
const protocolHeader = (options: Options | undefined) => ({
  [McpHeaders.PROTOCOL_VERSION]: options?.protocolVersion ?? defaultProtocolVersion
})

/** Everything discovery found for one MCP server. */
export interface Discovered {
  /** The `resource` parameter to send (RFC 8707): the metadata's `resource`, else the server's canonical URL. */
  readonly resource: string
  /** The protected resource metadata, absent for a 2025-03-26 server that has none. */
  readonly resourceMetadata: ProtectedResourceMetadata.Document | undefined
  /** The authorization server's metadata (or the 2025-03-26 defaults). */
  readonly authorizationServer: oauth.AuthorizationServer
  /** The Bearer challenge of the 401 or 403, when there was one. */
  readonly challenge: Challenge.Bearer | undefined
  /** The scopes to ask for, per {@link selectScope}. */
  readonly scope: ReadonlyArray<string> | undefined
}

/** The resolved HTTP settings of {@link Options}. */
export const httpOptions = (options: Options | undefined): Http.HttpOptions => ({
  allowInsecureRequests: options?.allowInsecureRequests,
  timeoutMs: Duration.toMillis(options?.timeout ?? Duration.seconds(10)),
  maxResponseBytes: options?.maxResponseBytes
})

/**
 * The scopes to request: the challenge's `scope` (what the server asks for,
 * step-up included), else the metadata's `scopes_supported`, else none (the
 * `scope` parameter is then omitted and the authorization server decides).
 */
export const selectScope = (
  challenge: Challenge.Bearer | undefined,
  resourceMetadata: ProtectedResourceMetadata.Document | undefined
): ReadonlyArray<string> | undefined => {
  if (challenge?.scope !== undefined && challenge.scope.length > 0) return challenge.scope
  const supported = resourceMetadata?.scopes_supported
  return supported !== undefined && supported.length > 0 ? supported : undefined
}

/**
 * Whether metadata naming `resource` may be used for `serverUrl`: the same
 * canonical URL, or an origin/path prefix of it (a server whose metadata names
 * its origin or a parent path).
 */
export const resourceCovers = (resource: string, serverUrl: string | URL): boolean => {
  let named: URL
  let server: URL
  try {
    named = new URL(ProtectedResourceMetadata.canonicalResource(resource))
    server = new URL(ProtectedResourceMetadata.canonicalResource(serverUrl))
  } catch {
    return false
  }
  if (named.origin !== server.origin || named.search !== "") return named.href === server.href
  const base = named.pathname.endsWith("/") ? named.pathname : `${named.pathname}/`
  return server.pathname === named.pathname || server.pathname.startsWith(base)
}

const checkUrl = (url: string, http: Http.HttpOptions): URL | string => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "not an absolute URL"
  }
  if (parsed.protocol === "https:") return parsed
  if (parsed.protocol === "http:" && http.allowInsecureRequests === true) return parsed
  return "not an https URL"
}

type Fetched =
  | { readonly _tag: "Found"; readonly document: unknown }
  | { readonly _tag: "Absent"; readonly status: number }

const getJson = (
  url: URL,
  http: Http.HttpOptions,
  step: string,
  headers: Readonly<Record<string, string>>
): Effect.Effect<Fetched, DiscoveryFailed> =>
  Http.attempt(
    async (): Promise<Fetched> => {
      const response = await Http.fetchOf(http)(url.href, {
        headers: { accept: "application/json", ...headers },
        redirect: "manual",
        signal: AbortSignal.timeout(http.timeoutMs)
      })
      if (response.status !== 200) return { _tag: "Absent", status: response.status }
      return { _tag: "Found", document: await response.json() }
    },
    (detail) => new DiscoveryFailed({ step, url: url.href, detail })
  )

const prmStep = "protected resource metadata"

/** The server's canonical URL, or `DiscoveryFailed` for one that is not an absolute http(s) URL. */
const serverResource = (serverUrl: string | URL): Effect.Effect<string, DiscoveryFailed> =>
  Effect.try({
    try: () => ProtectedResourceMetadata.canonicalResource(serverUrl),
    catch: () =>
      new DiscoveryFailed({ step: "server URL", url: String(serverUrl), detail: "not an absolute http(s) URL" })
  })

/**
 * The protected resource metadata of `serverUrl`: the challenge's URL first,
 * then the well-known URLs; `None` when none of them has a document (a
 * 2025-03-26 server). A document for another resource, or one that is not a
 * metadata document, fails: it is never skipped for the next URL.
 */
export const protectedResourceMetadata = (
  serverUrl: string | URL,
  challenge: Challenge.Bearer | undefined,
  options?: Options
): Effect.Effect<Option.Option<ProtectedResourceMetadata.Document>, DiscoveryFailed> =>
  Effect.gen(function* () {
    const http = httpOptions(options)
    const resource = yield* serverResource(serverUrl)
    const candidates = [
      ...(challenge?.resourceMetadata === undefined ? [] : [challenge.resourceMetadata]),
      ...ProtectedResourceMetadata.wellKnownUrls(resource)
    ]
    const statuses: Array<string> = []
    for (const candidate of candidates) {
      const url = checkUrl(candidate, http)
      if (typeof url === "string") {
        return yield* new DiscoveryFailed({ step: prmStep, url: candidate, detail: url })
      }
      const fetched = yield* getJson(url, http, prmStep, protocolHeader(options))
      if (fetched._tag === "Absent") {
        statuses.push(`${url.href} ${fetched.status}`)
        continue
      }
      const document = yield* ProtectedResourceMetadata.decode(fetched.document).pipe(
        Effect.mapError(
          () =>
            new DiscoveryFailed({ step: prmStep, url: url.href, detail: "not a protected resource metadata document" })
        )
      )
      if (!resourceCovers(document.resource, serverUrl)) {
        return yield* new DiscoveryFailed({
          step: prmStep,
          url: url.href,
          detail: `the document is for ${document.resource}, not ${String(serverUrl)}`
        })
      }
      return Option.some(document)
    }
    yield* Effect.logDebug(`no protected resource metadata: ${statuses.join(", ")}`)
    return Option.none()
  })

const asStep = "authorization server metadata"

/**
 * The metadata of the authorization server `issuer`, from the URLs MCP
 * 2025-11-25 lists, in its order: for an issuer with a path, RFC 8414 and
 * OpenID Connect discovery with the path inserted, then OpenID Connect with
 * it appended; for one without, RFC 8414's then OpenID Connect's. Its
 * `issuer` must be `issuer`, or, with `sameOrigin` (a 2025-03-26 server's
 * origin, where no one named the issuer), any issuer at that origin. A
 * failure names each URL tried and why it was not used.
 */
export const authorizationServerMetadata = (
  issuer: string,
  options?: Options,
  sameOrigin = false
): Effect.Effect<oauth.AuthorizationServer, DiscoveryFailed> =>
  Effect.gen(function* () {
    const http = httpOptions(options)
    const url = checkUrl(issuer, http)
    if (typeof url === "string") return yield* new DiscoveryFailed({ step: asStep, url: issuer, detail: url })
    return yield* Http.attempt(
      () =>
        Issuer.discover(url, http, {
          headers: protocolHeader(options),
          expectedIssuer: sameOrigin ? (response) => issuerAtOrigin(url, response) : undefined
        }),
      (detail) => new DiscoveryFailed({ step: asStep, url: issuer, detail })
    )
  })

/**
 * For a 2025-03-26 server, whose authorization server no one named: the
 * issuer its metadata states, when that is at the server's own origin (an
 * authorization server under a path of it, as `/oauth`); `origin` otherwise,
 * which fails the issuer check. The metadata came from the MCP server itself,
 * so it names no authorization server the MCP server could not name anyway.
 */
const issuerAtOrigin = async (origin: URL, response: Response): Promise<URL> => {
  if (response.status !== 200) return origin
  try {
    const stated: unknown = ((await response.clone().json()) as { issuer?: unknown }).issuer
    if (typeof stated !== "string") return origin
    const url = new URL(stated)
    return url.origin === origin.origin ? url : origin
  } catch {
    return origin
  }
}

/** The 2025-03-26 default endpoints of an authorization server at `origin` that publishes no metadata. */
export const defaultEndpoints = (origin: string): oauth.AuthorizationServer => ({
  issuer: origin,
  authorization_endpoint: `${origin}/authorize`,
  token_endpoint: `${origin}/token`,
  registration_endpoint: `${origin}/register`,
  code_challenge_methods_supported: ["S256"]
})

/**
 * Discovery after a 401 (or 403) from `serverUrl` whose `WWW-Authenticate`
 * value(s) are `wwwAuthenticate`: resource metadata, then the first
 * authorization server it names (or the server's own origin, for a
 * 2025-03-26 server, with its default endpoints as the last resort).
 */
export const discover = (
  serverUrl: string | URL,
  wwwAuthenticate: string | ReadonlyArray<string> | undefined,
  options?: Options
): Effect.Effect<Discovered, DiscoveryFailed> =>
  Effect.gen(function* () {
    const challenge =
      wwwAuthenticate === undefined ? undefined : Option.getOrUndefined(Challenge.parse(wwwAuthenticate))
    const found = yield* protectedResourceMetadata(serverUrl, challenge, options)
    const resourceMetadata = Option.getOrUndefined(found)
    const scope = selectScope(challenge, resourceMetadata)
    if (resourceMetadata !== undefined) {
      const issuer = resourceMetadata.authorization_servers?.[0]
      if (issuer === undefined) {
        return yield* new DiscoveryFailed({
          step: prmStep,
          url: resourceMetadata.resource,
          detail: "the document names no authorization server"
        })
      }
      const authorizationServer = yield* authorizationServerMetadata(issuer, options)
      return { resource: resourceMetadata.resource, resourceMetadata, authorizationServer, challenge, scope }
    }
    const resource = yield* serverResource(serverUrl)
    const origin = new URL(resource).origin
    const authorizationServer = yield* authorizationServerMetadata(origin, options, true).pipe(
      Effect.catch((error) =>
        Effect.as(Effect.logDebug(`${error.message}; using the default endpoints`), defaultEndpoints(origin))
      )
    )
    return { resource, resourceMetadata: undefined, authorizationServer, challenge, scope }
  })
