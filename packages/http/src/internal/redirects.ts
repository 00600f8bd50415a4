/**
 * The redirects the Streamable HTTP client follows: a 307 or 308, which keep
 * the method and the body, to the same origin, at most five in a row. That is
 * what a server mounted at `/mcp/` answers a POST to `/mcp` with (Starlette's
 * trailing-slash redirect, under many Python servers), and what a server that
 * routes some calls to a path of their own sends. The request goes again
 * whole, its headers included: same origin, same server.
 *
 * Not followed, and reported by the caller with `describe`: a redirect to
 * another origin, so that neither the session id nor a token (whose audience
 * is this server) ever reaches another server; a 301, 302 or 303, which would
 * turn the POST into a GET; a sixth redirect in a row.
 */
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Stream from "effect/Stream"

// The package compiles without DOM or Node typings; the global is the platform's own.
declare const URL: new (url: string, base?: string) => { readonly href: string; readonly origin: string }

/** The most redirects followed for one request. */
export const maxRedirects = 5

/** Whether a status is a redirect (3xx): one `follow` did not follow, once it returned. */
export const isRedirect = (status: number): boolean => status >= 300 && status < 400

/** The redirect's target: undefined when it is not a URL, `false` when it is on another origin. */
const targetOf = (from: string, location: string): string | false | undefined => {
  try {
    const base = new URL(from)
    const target = new URL(location, base.href)
    return target.origin === base.origin ? target.href : false
  } catch {
    return undefined
  }
}

/**
 * Lets a response's body go unread: one chunk at most is taken, then the
 * body is dropped with its connection (an empty one leaves the connection
 * free). For a redirect's body, and any other nobody should wait for.
 */
export const discard = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<void> =>
  Effect.ignore(Stream.runDrain(Stream.take(response.stream, 1)))

/**
 * Follows what the module follows, from `response` (the answer to
 * `request`), sending with `send`; returns the last response: not a
 * redirect, or one not followed.
 */
export const follow = <E>(
  send: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<HttpClientResponse.HttpClientResponse, E>,
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse,
  hops = 0
): Effect.Effect<HttpClientResponse.HttpClientResponse, E> => {
  const status = response.status
  if ((status !== 307 && status !== 308) || hops >= maxRedirects) return Effect.succeed(response)
  const location = response.headers.location
  const target = location === undefined ? undefined : targetOf(request.url, location)
  if (typeof target !== "string") return Effect.succeed(response)
  const next = HttpClientRequest.setUrl(request, target)
  return Effect.andThen(
    discard(response),
    Effect.flatMap(send(next), (answer) => follow(send, next, answer, hops + 1))
  )
}

/** Why a redirect `follow` returned was not followed, for the error that reports it. */
export const describe = (
  request: HttpClientRequest.HttpClientRequest,
  response: HttpClientResponse.HttpClientResponse
): string => {
  const status = response.status
  const location = response.headers.location
  if (location === undefined) return `HTTP ${status} without a Location`
  const to = `HTTP ${status} to ${JSON.stringify(location.slice(0, 200))}`
  if (status !== 307 && status !== 308) {
    return `${to}, which would turn the ${request.method} into a GET: not followed; connect to that URL instead`
  }
  const target = targetOf(request.url, location)
  if (target === undefined) return `${to}, not a URL`
  if (target === false) {
    return `${to}, another origin: not followed, so that neither the session nor a token reaches another server; connect to that URL instead`
  }
  return `${to}, more than ${maxRedirects} redirects in a row`
}
