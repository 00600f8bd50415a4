/**
 * An `HttpClient` that logs in: it wraps effect's `HttpClient` so that every
 * request to the MCP server carries `Authorization: Bearer <token>` from the
 * {@link OAuthClient}, a 401 hands the challenge to
 * {@link OAuthClientShape.authorize} and is retried once with the new token,
 * and a 403 `insufficient_scope` steps up (a login for the challenge's scopes)
 * and is retried, at most `maxStepUps` times per request.
 *
 * Provided under the transports (`StreamableHttpClient`, `SseClient`), it
 * authenticates every request they make: POSTs, the GET event streams and their
 * resumptions, the DELETE at close, and the legacy transport's GET and message
 * POSTs. A retry sends the same request again, body included: a streamed body
 * must be a Stream that can run twice (the transports' are).
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Challenge from "./Challenge.ts"
import { Dpop, type DpopShape } from "./Dpop.ts"
import { OAuthClient, type OAuthClientShape } from "./OAuthClient.ts"
import type { OAuthClientError } from "./OAuthClientError.ts"

/** How {@link make} authenticates requests. */
export interface Options {
  /**
   * The MCP server: requests at its origin carry its token, requests to any
   * other origin go out untouched (a token is never sent to another server).
   * Without it, the first URL requested at each origin names the server for
   * that origin (the transport's URL; the legacy transport's message
   * endpoint, requested later, shares its event stream's token).
   */
  readonly serverUrl?: string | URL | undefined
  /**
   * Logins for more scopes after a 403 `insufficient_scope`, per request;
   * 2 by default. A server that refuses every token would otherwise send the
   * client round forever; the last 403 is returned as it came.
   */
  readonly maxStepUps?: number | undefined
  /**
   * The DPoP key the {@link OAuthClient} binds tokens to: a token issued
   * bound to it is presented as `Authorization: DPoP` with a fresh proof per
   * request, and a `use_dpop_nonce` challenge is answered once with the
   * server's nonce (RFC 9449 §7, §9). {@link make} takes the `Dpop` service in
   * context.
   */
  readonly dpop?: DpopShape | undefined
}

const stripped = (url: URL) => `${url.origin}${url.pathname}`

const challengeOf = (response: HttpClientResponse.HttpClientResponse): string | undefined =>
  response.headers["www-authenticate"]

/** Whether a 403 asks for more scopes (RFC 6750 §3.1), not a plain refusal. */
const isStepUp = (response: HttpClientResponse.HttpClientResponse): boolean => {
  const header = challengeOf(response)
  if (header === undefined) return false
  const challenge = Challenge.parse(header)
  return Option.isSome(challenge) && challenge.value.error === "insufficient_scope"
}

/**
 * The request failed because no token could be obtained: the OAuth error's
 * message (which names the step and URL, never a token) on the request as it
 * was given, without the `Authorization` header this client adds.
 */
const authorizationFailed = (request: HttpClientRequest.HttpClientRequest, error: OAuthClientError) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.TransportError({ request, cause: error, description: error.message })
  })

/** Wraps `client`: every request to the MCP server is authenticated through `oauth`. */
export const wrap = (
  client: HttpClient.HttpClient,
  oauth: OAuthClientShape,
  options: Options = {}
): HttpClient.HttpClient => {
  const maxStepUps = options.maxStepUps ?? 2
  const fixed = options.serverUrl === undefined ? undefined : new URL(options.serverUrl)
  // Per origin, the URL whose tokens its requests carry (the first one requested).
  const servers = new Map<string, string>()

  const resolve = (requestUrl: string): string | undefined => {
    let url: URL
    try {
      url = new URL(requestUrl)
    } catch {
      return undefined
    }
    if (fixed !== undefined) return url.origin === fixed.origin ? fixed.href : undefined
    const known = servers.get(url.origin)
    if (known !== undefined) return known
    const server = stripped(url)
    servers.set(url.origin, server)
    return server
  }
  // A transport requests the same URL over and over: it is parsed once, not per message.
  let lastUrl: string | undefined
  let lastServer: string | undefined
  const serverOf = (request: HttpClientRequest.HttpClientRequest): string | undefined => {
    if (request.url !== lastUrl) {
      lastServer = resolve(request.url)
      lastUrl = request.url
    }
    return lastServer
  }

  // The refused response's body is read to its end, so its connection can serve the retry.
  const discard = (response: HttpClientResponse.HttpClientResponse) => Effect.ignore(response.text)

  const dpop = options.dpop
  const withProof = (key: DpopShape, request: HttpClientRequest.HttpClientRequest, token: string) =>
    Effect.flatMap(key.present(request.method, request.url, token), (headers) =>
      client.postprocess(
        Effect.succeed(
          request.pipe(
            HttpClientRequest.setHeader("authorization", headers.authorization),
            HttpClientRequest.setHeader("dpop", headers.dpop)
          )
        )
      )
    )

  const send = (request: HttpClientRequest.HttpClientRequest, token: string | undefined) => {
    if (token === undefined || dpop === undefined || !dpop.isBound(token)) {
      return client.postprocess(
        Effect.succeed(token === undefined ? request : HttpClientRequest.bearerToken(request, token))
      )
    }
    // Every answer may carry the server's next nonce; a use_dpop_nonce challenge is answered once.
    return Effect.flatMap(withProof(dpop, request, token), (response) =>
      dpop.retryWithNonce(request.url, response.status, (name) => response.headers[name])
        ? Effect.andThen(discard(response), withProof(dpop, request, token))
        : Effect.succeed(response)
    )
  }

  const authenticated = (
    request: HttpClientRequest.HttpClientRequest
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
    const server = serverOf(request)
    if (server === undefined) return client.postprocess(Effect.succeed(request))
    const renew = (response: HttpClientResponse.HttpClientResponse, refused: string | undefined) =>
      Effect.andThen(
        discard(response),
        oauth
          .authorize(server, challengeOf(response), refused)
          .pipe(Effect.mapError((error) => authorizationFailed(request, error)))
      )
    return Effect.gen(function* () {
      let token = Option.getOrUndefined(
        yield* oauth.accessToken(server).pipe(Effect.mapError((error) => authorizationFailed(request, error)))
      )
      let response = yield* send(request, token)
      let renewed = false
      let stepUps = 0
      while (true) {
        if (response.status === 401 && !renewed) {
          renewed = true
        } else if (response.status === 403 && stepUps < maxStepUps && isStepUp(response)) {
          stepUps++
        } else {
          return response
        }
        token = yield* renew(response, token)
        response = yield* send(request, token)
      }
    })
  }

  return HttpClient.makeWith((request) => Effect.flatMap(request, authenticated), client.preprocess)
}

/** {@link wrap} over the `HttpClient` and {@link OAuthClient} in context. */
export const make = (
  options: Options = {}
): Effect.Effect<HttpClient.HttpClient, never, HttpClient.HttpClient | OAuthClient> =>
  Effect.gen(function* () {
    const dpop = yield* Effect.serviceOption(Dpop)
    return wrap(yield* HttpClient.HttpClient, yield* OAuthClient, { dpop: Option.getOrUndefined(dpop), ...options })
  })

/**
 * Replaces the `HttpClient` in context with one that logs in through the
 * {@link OAuthClient}: provide it under `StreamableHttpClient.layer` or
 * `SseClient.layer`, over the platform's client (e.g. `NodeHttpClient.layerUndici`).
 */
export const layer = (
  options: Options = {}
): Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient | OAuthClient> =>
  Layer.effect(HttpClient.HttpClient, make(options))
