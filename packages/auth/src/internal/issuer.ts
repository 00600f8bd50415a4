/**
 * What the verifiers need from the authorization server before the first
 * token: its metadata (RFC 8414, else OpenID Connect discovery). Fetched on
 * first use, never at start, so a server starts while its issuer is down; a
 * failure is not remembered, the next request tries again.
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { type InvalidToken, VerifierUnavailable } from "../AuthError.ts"

/** Options shared by the verifiers for talking to the authorization server. */
export interface HttpOptions {
  /** Allows `http:` URLs for the authorization server (a loopback issuer in tests); `https:` only otherwise. */
  readonly allowInsecureRequests?: boolean | undefined
  /** Milliseconds an HTTP request to the authorization server may take. */
  readonly timeoutMs: number
}

/** oauth4webapi's request options for these settings. */
export const requestOptions = (
  options: HttpOptions
): Pick<oauth.HttpRequestOptions<"GET">, "signal" | typeof oauth.allowInsecureRequests> => ({
  signal: () => AbortSignal.timeout(options.timeoutMs),
  ...(options.allowInsecureRequests === true ? { [oauth.allowInsecureRequests]: true } : {})
})

/** Describes a failure to reach or use the authorization server, quoting neither token nor body. */
export const describe = (error: unknown): string => {
  if (error instanceof oauth.ResponseBodyError)
    return `the authorization server answered ${error.status} ${error.error}`
  if (error instanceof oauth.WWWAuthenticateChallengeError) return `the authorization server answered ${error.status}`
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

/** Fetches the issuer's metadata: RFC 8414's well-known URL, then OpenID Connect discovery's. */
export const discover = async (issuer: string, options: HttpOptions): Promise<oauth.AuthorizationServer> => {
  const issuerUrl = new URL(issuer)
  const fetchWith = async (algorithm: "oauth2" | "oidc") =>
    oauth.processDiscoveryResponse(
      issuerUrl,
      await oauth.discoveryRequest(issuerUrl, { ...requestOptions(options), algorithm })
    )
  try {
    return await fetchWith("oauth2")
  } catch (first) {
    // An unreachable server fails both ways: report the first failure rather than try again.
    if (first instanceof TypeError || first instanceof DOMException) throw first
    return fetchWith("oidc")
  }
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
