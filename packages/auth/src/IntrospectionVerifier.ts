/**
 * Verifies any access token (opaque or JWT) by asking the authorization
 * server (OAuth 2.0 Token Introspection, RFC 7662): a POST of the token to the
 * introspection endpoint, authenticated as this resource's own client. The
 * answer must say `active`, name this resource in `aud` (RFC 8707; an answer
 * without `aud` is refused, since nothing then binds the token to this
 * resource) and, when it says, this issuer and an unexpired `exp`.
 *
 * Answers are cached per token until the token's expiry or `cacheMaxAge`,
 * whichever comes first (a revoked token stays accepted that long), in a map
 * bounded by `cacheSize`; refusals are not cached. The endpoint is discovered
 * from the issuer's metadata on first use unless given.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as oauth from "oauth4webapi"
import { InvalidToken, VerifierUnavailable } from "./AuthError.ts"
import type { PrincipalShape } from "./Principal.ts"
import { audienceOf, toPrincipal } from "./internal/claims.ts"
import * as Issuer from "./internal/issuer.ts"
import { TokenVerifier, type TokenVerifierShape } from "./TokenVerifier.ts"

/** How a {@link make} verifier introspects tokens. */
export interface Options {
  /** The authorization server's issuer identifier (metadata discovery, and the `iss` an answer may carry). */
  readonly issuer: string
  /** This resource's identifier, or several: the answer's `aud` must name one of them. */
  readonly audience: string | ReadonlyArray<string>
  /** The introspection endpoint; by default the `introspection_endpoint` of the issuer's metadata. */
  readonly introspectionEndpoint?: string | undefined
  /** This resource's client id at the authorization server. */
  readonly clientId: string
  /** Its client secret. */
  readonly clientSecret: string
  /** How the client authenticates; `client_secret_basic` by default. */
  readonly clientAuthentication?: "client_secret_basic" | "client_secret_post" | undefined
  /** Tolerated clock difference for `exp` and `nbf`; 5 seconds by default. */
  readonly clockTolerance?: Duration.Input | undefined
  /** The longest an answer is reused (never past the token's expiry); 1 minute by default, 0 for none. */
  readonly cacheMaxAge?: Duration.Input | undefined
  /** The most answers kept; the oldest goes first. 10 000 by default. */
  readonly cacheSize?: number | undefined
  /** How long a request to the authorization server may take; 5 seconds by default. */
  readonly timeout?: Duration.Input | undefined
  /** Allows `http:` URLs for the authorization server (a loopback issuer); `https:` only otherwise. */
  readonly allowInsecureRequests?: boolean | undefined
  /**
   * The most bytes of the issuer's metadata or an introspection answer read; 1 MiB by default. A larger
   * answer makes verification unavailable (naming its URL and the limit) once that many bytes have arrived.
   */
  readonly maxResponseBytes?: number | undefined
}

interface Cached {
  readonly principal: PrincipalShape
  readonly until: number
}

/**
 * An introspecting verifier; nothing is fetched until the first token.
 * Throws a `TypeError` for an `issuer` or endpoint that is not a URL (configuration).
 */
export const make = (options: Options): TokenVerifierShape => {
  const http: Issuer.HttpOptions = {
    allowInsecureRequests: options.allowInsecureRequests,
    timeoutMs: Duration.toMillis(options.timeout ?? Duration.seconds(5)),
    maxResponseBytes: options.maxResponseBytes
  }
  new URL(options.issuer)
  if (options.introspectionEndpoint !== undefined) new URL(options.introspectionEndpoint)
  const server = Issuer.once(async (): Promise<oauth.AuthorizationServer> => {
    if (options.introspectionEndpoint !== undefined) {
      return { issuer: options.issuer, introspection_endpoint: options.introspectionEndpoint }
    }
    const metadata = await Issuer.discover(options.issuer, http)
    if (metadata.introspection_endpoint === undefined) {
      throw new Error("the issuer's metadata has no introspection_endpoint")
    }
    return metadata
  })
  const client: oauth.Client = { client_id: options.clientId }
  const clientAuth =
    options.clientAuthentication === "client_secret_post"
      ? oauth.ClientSecretPost(options.clientSecret)
      : oauth.ClientSecretBasic(options.clientSecret)
  const audiences = typeof options.audience === "string" ? [options.audience] : options.audience
  const toleranceMs = Duration.toMillis(options.clockTolerance ?? Duration.seconds(5))
  const cacheMaxAgeMs = Duration.toMillis(options.cacheMaxAge ?? Duration.minutes(1))
  const cacheSize = options.cacheSize ?? 10_000
  // Keyed by the token itself: it lives only in this process's memory, as it did in the request.
  const cache = new Map<string, Cached>()

  const remember = (token: string, principal: PrincipalShape, now: number) => {
    const until = Math.min(now + cacheMaxAgeMs, principal.expiresAt ?? Number.POSITIVE_INFINITY)
    if (until <= now || cacheSize <= 0) return
    cache.delete(token)
    while (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
    cache.set(token, { principal, until })
  }

  const judge = (answer: oauth.IntrospectionResponse, now: number): PrincipalShape | InvalidToken => {
    if (answer.active !== true) return new InvalidToken({ reason: "Inactive" })
    if (typeof answer.exp === "number" && now > answer.exp * 1000 + toleranceMs) {
      return new InvalidToken({ reason: "Expired" })
    }
    if (typeof answer.nbf === "number" && now + toleranceMs < answer.nbf * 1000) {
      return new InvalidToken({ reason: "NotYetValid" })
    }
    if (answer.iss !== undefined && answer.iss !== options.issuer) return new InvalidToken({ reason: "WrongIssuer" })
    if (!audienceOf(answer).some((aud) => audiences.includes(aud))) return new InvalidToken({ reason: "WrongAudience" })
    return toPrincipal(answer)
  }

  // Made once (a generator function made per call costs its own generator prototype and map): run per request.
  const verify = Effect.fnUntraced(function* (
    token: string
  ): Effect.fn.Return<PrincipalShape, InvalidToken | VerifierUnavailable> {
    const now = yield* Clock.currentTimeMillis
    const hit = cache.get(token)
    if (hit !== undefined) {
      if (now < hit.until) return hit.principal
      cache.delete(token)
    }
    const as = yield* Issuer.call("metadata", server)
    const answer = yield* Effect.tryPromise({
      try: async () =>
        oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, clientAuth, token, Issuer.requestOptions(http))
        ),
      // A server that will not introspect this kind of token (oidc-provider with a JWT) does not vouch for it.
      catch: (error) =>
        error instanceof oauth.ResponseBodyError && error.error === "unsupported_token_type"
          ? new InvalidToken({ reason: "Inactive" })
          : new VerifierUnavailable({ step: "introspection", detail: Issuer.describe(error) })
    })
    const principal = judge(answer, now)
    if (principal instanceof InvalidToken) return yield* principal
    remember(token, principal, now)
    return principal
  }, Issuer.logFailure)

  return { verify }
}

/** {@link make} as the {@link TokenVerifier} of a protected resource. */
export const layer = (options: Options): Layer.Layer<TokenVerifier> => Layer.sync(TokenVerifier, () => make(options))
