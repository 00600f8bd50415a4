/**
 * What the client-side modules share for talking to authorization servers
 * and protected resources through oauth4webapi: request options, and the
 * description of a failure that quotes no token, code, secret or body.
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { describe as describeServerFailure } from "./issuer.ts"

const errorCode = /^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/

/** How the client's HTTP requests are made (bodies read up to a limit), and oauth4webapi's options for them: the verifiers' own. */
export { fetchOf, type HttpOptions, requestOptions } from "./issuer.ts"

/**
 * A failure described for an error message. oauth4webapi's own messages are
 * fixed texts; their causes are not used, since a JSON parse error quotes the
 * body it failed on (a token response's body holds the token).
 */
export const describe = (error: unknown): string => {
  if (error instanceof oauth.ResponseBodyError) {
    return `the server answered ${error.status} ${error.error}`
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    // The challenge's error code (RFC 6750 §3: a fixed vocabulary of printable characters).
    const code = error.cause.map((c) => c.parameters.error).find((e) => e !== undefined && errorCode.test(e))
    return `the server answered ${error.status}${code === undefined ? "" : ` ${code}`}`
  }
  if (error instanceof oauth.AuthorizationResponseError) {
    return `the authorization server answered ${errorCode.test(error.error) ? error.error : "an error"}`
  }
  if (error instanceof oauth.OperationProcessingError) return error.message
  if (error instanceof SyntaxError) return "the answer is not JSON"
  return describeServerFailure(error)
}

/**
 * Whether the server refused (answered 4xx, with an OAuth error or a challenge) rather than failed: a
 * network error, a timeout or a 5xx may go away, a refusal will not.
 */
export const isRefusal = (error: unknown): boolean =>
  (error instanceof oauth.ResponseBodyError || error instanceof oauth.WWWAuthenticateChallengeError) &&
  error.status >= 400 &&
  error.status < 500

/**
 * A promise-returning step as an Effect whose failure is made by `fail` from
 * the description (and whether the server refused, see `isRefusal`).
 */
export const attempt = <A, E>(
  run: () => Promise<A>,
  fail: (detail: string, refused: boolean) => E
): Effect.Effect<A, E> => Effect.tryPromise({ try: run, catch: (error) => fail(describe(error), isRefusal(error)) })
