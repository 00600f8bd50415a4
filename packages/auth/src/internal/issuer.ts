/**
 * What the verifiers and the client need from an authorization server before
 * the first token: its metadata, from the well-known URLs MCP 2025-11-25
 * lists, in its order. The verifiers fetch it on first use, never at start,
 * so a server starts while its issuer is down; a failure is not remembered,
 * the next request tries again.
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { type InvalidToken, VerifierUnavailable } from "../AuthError.ts"
import { boundedFetch, defaultMaxResponseBytes, overLimit, ResponseTooLarge } from "./boundedFetch.ts"

/** Options shared by the verifiers for talking to the authorization server. */
export interface HttpOptions {
  /** Allows `http:` URLs for the authorization server (a loopback issuer in tests); `https:` only otherwise. */
  readonly allowInsecureRequests?: boolean | undefined
  /** Milliseconds an HTTP request to the authorization server may take. */
  readonly timeoutMs: number
  /** The most bytes of a response body read; `defaultMaxResponseBytes` (1 MiB) when absent. */
  readonly maxResponseBytes?: number | undefined
}

/** The `fetch` of these settings: its response bodies read up to the limit (see `boundedFetch`). */
export const fetchOf = (options: HttpOptions) => boundedFetch(options.maxResponseBytes ?? defaultMaxResponseBytes)

/** oauth4webapi's request options, for a request of any method. */
export interface RequestOptions {
  readonly signal: () => AbortSignal
  readonly [oauth.customFetch]: (url: string, init: RequestInit) => Promise<Response>
  readonly [oauth.allowInsecureRequests]?: boolean
}

/** oauth4webapi's request options for these settings: the timeout, the bounded fetch, `http:` when allowed. */
export const requestOptions = (options: HttpOptions): RequestOptions => ({
  signal: () => AbortSignal.timeout(options.timeoutMs),
  [oauth.customFetch]: fetchOf(options),
  ...(options.allowInsecureRequests === true ? { [oauth.allowInsecureRequests]: true } : {})
})

/** Describes a failure to reach or use the authorization server, quoting neither token nor body. */
export const describe = (error: unknown): string => {
  if (error instanceof oauth.ResponseBodyError)
    return `the authorization server answered ${error.status} ${error.error}`
  if (error instanceof oauth.WWWAuthenticateChallengeError) return `the authorization server answered ${error.status}`
  // oauth4webapi's messages are fixed texts; a cause may be a JSON parse error quoting the body.
  if (error instanceof oauth.OperationProcessingError) return error.message
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return "the request timed out"
  }
  if (error instanceof Error) {
    // fetch's TypeError hides the reason (ECONNREFUSED, a DNS failure) in its cause.
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
    return `${error.message}${cause}`
  }
  return "unknown failure"
}

/** A lazily fetched value, shared by concurrent callers, refetched after a failure. */
export const once = <A>(load: () => Promise<A>): (() => Promise<A>) => {
  let current: Promise<A> | undefined
  return () => {
    if (current === undefined) {
      const attempt = load()
      current = attempt
      attempt.catch(() => {
        if (current === attempt) current = undefined
      })
    }
    return current
  }
}

/**
 * The URLs of an issuer's metadata, in the order MCP 2025-11-25 asks clients
 * to try them. An issuer with a path (`https://as.example/tenant1`): RFC 8414
 * with the path inserted (`/.well-known/oauth-authorization-server/tenant1`),
 * OpenID Connect discovery with the path inserted
 * (`/.well-known/openid-configuration/tenant1`), then appended
 * (`/tenant1/.well-known/openid-configuration`). Without a path: RFC 8414's,
 * then OpenID Connect's, at the root.
 */
export const metadataUrls = (issuer: URL): ReadonlyArray<URL> => {
  // A trailing slash is not part of the path inserted (RFC 8414 §3.1; oauth4webapi strips it too).
  const path = issuer.pathname.replace(/\/$/, "")
  const at = (pathname: string) => {
    const url = new URL(issuer.href)
    url.pathname = pathname
    return url
  }
  return path === ""
    ? [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    : [
        at(`/.well-known/oauth-authorization-server${path}`),
        at(`/.well-known/openid-configuration${path}`),
        at(`${path}/.well-known/openid-configuration`)
      ]
}

/** No metadata at any of the issuer's URLs: each URL tried and why it was not used. */
export class MetadataNotFound extends Error {
  override readonly name = "MetadataNotFound"
  readonly attempts: ReadonlyArray<string>
  constructor(attempts: ReadonlyArray<string>) {
    super(attempts.join("; "))
    this.attempts = attempts
  }
}

/** What {@link discover} may be told beyond the HTTP settings. */
export interface DiscoverOptions {
  /** Headers of every request (the client's `MCP-Protocol-Version`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The issuer the document must name, given its answer; the issuer discovered by default. */
  readonly expectedIssuer?: ((response: Response) => Promise<URL>) | undefined
}

/**
 * The issuer's metadata from the first of {@link metadataUrls} that answers
 * 200 with a document naming the issuer (oauth4webapi's check). An answer that
 * is not that (a 404, another issuer, too large) moves on to the next URL; a
 * server that cannot be reached (a network error, a timeout) is not asked
 * again at the next one. Fails with {@link MetadataNotFound} naming each URL
 * tried and why.
 */
export const discover = async (
  issuer: string | URL,
  options: HttpOptions,
  more: DiscoverOptions = {}
): Promise<oauth.AuthorizationServer> => {
  const issuerUrl = new URL(issuer)
  if (issuerUrl.protocol !== "https:" && !(issuerUrl.protocol === "http:" && options.allowInsecureRequests === true)) {
    throw new MetadataNotFound([`${issuerUrl.href}: not an https URL`])
  }
  const get = fetchOf(options)
  const attempts: Array<string> = []
  for (const url of metadataUrls(issuerUrl)) {
    let response: Response
    try {
      response = await get(url.href, {
        method: "GET",
        headers: { ...more.headers, accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs)
      })
    } catch (error) {
      if (error instanceof ResponseTooLarge) {
        attempts.push(`${url.href}: the answer is ${overLimit(error.limit)}`)
        continue
      }
      attempts.push(`${url.href}: ${describe(error)}`)
      // Unreachable: every URL is at the same origin, so the next would fail the same way, after as long.
      throw new MetadataNotFound(attempts)
    }
    if (response.status !== 200) {
      attempts.push(`${url.href}: answered ${response.status}`)
      continue
    }
    try {
      const expected = more.expectedIssuer === undefined ? issuerUrl : await more.expectedIssuer(response)
      return await oauth.processDiscoveryResponse(expected, response)
    } catch (error) {
      attempts.push(`${url.href}: ${describe(error)}`)
    }
  }
  throw new MetadataNotFound(attempts)
}

/** A promise-returning step against the authorization server, as an Effect failing with `VerifierUnavailable`. */
export const call = <A>(step: string, run: () => Promise<A>): Effect.Effect<A, VerifierUnavailable> =>
  Effect.tryPromise({
    try: run,
    catch: (error) => new VerifierUnavailable({ step, detail: describe(error) })
  })

/**
 * Logs why a verification failed: a warning when the authorization server
 * could not be used (an operator must act), a debug line for a refused
 * token (clients send bad tokens all the time). Neither quotes the token.
 */
export const logFailure = <A, R>(
  verify: Effect.Effect<A, InvalidToken | VerifierUnavailable, R>
): Effect.Effect<A, InvalidToken | VerifierUnavailable, R> =>
  Effect.tapError(verify, (error) =>
    error._tag === "VerifierUnavailable"
      ? Effect.logWarning(error.message)
      : Effect.logDebug(`bearer token refused: ${error.reason}`)
  )
