/**
 * Verifies JWT access tokens (RFC 9068) locally, with the authorization
 * server's public keys: no call to the authorization server per request.
 *
 * The key set is fetched on first use (from `jwksUri`, or the `jwks_uri` of
 * the issuer's metadata), cached, and fetched again when a token names an
 * unknown `kid` (the issuer rotated its keys), at most once per cooldown so a
 * flood of made-up `kid`s cannot turn into a flood of requests. Each token is
 * checked for its signature (algorithms from an allow-list), issuer,
 * audience (this resource's identifier, RFC 8707: a token issued for another
 * resource is refused), expiry (required) and not-before, with a clock
 * tolerance; the current time is Effect's `Clock`.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
// jose by its subpaths: its root loads every algorithm family (46 modules, ~25 ms of a start), this needs four.
import { decodeProtectedHeader } from "jose/decode/protected_header"
import * as joseErrors from "jose/errors"
import { createRemoteJWKSet, customFetch, type RemoteJWKSetOptions } from "jose/jwks/remote"
import { jwtVerify } from "jose/jwt/verify"
import { InvalidToken, type InvalidTokenReason, VerifierUnavailable } from "./AuthError.ts"
import type { PrincipalShape } from "./Principal.ts"
import { toPrincipal } from "./internal/claims.ts"
import * as Issuer from "./internal/issuer.ts"
import { TokenVerifier, type TokenVerifierShape } from "./TokenVerifier.ts"

/** The asymmetric algorithms accepted by default (no `none`, no HMAC: the resource holds no shared secret). */
export const defaultAlgorithms: ReadonlyArray<string> = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519"
]

/** How a {@link make} verifier checks tokens. */
export interface Options {
  /** The issuer identifier tokens must carry in `iss` (the authorization server's). */
  readonly issuer: string
  /**
   * This resource's identifier (its protected resource metadata's `resource`),
   * or several: a token is accepted when its `aud` names one of them.
   */
  readonly audience: string | ReadonlyArray<string>
  /** The key set's URL; by default the `jwks_uri` of the issuer's metadata (RFC 8414, else OpenID discovery). */
  readonly jwksUri?: string | undefined
  /** Accepted signature algorithms; {@link defaultAlgorithms} by default. */
  readonly algorithms?: ReadonlyArray<string> | undefined
  /** Required JWT `typ` header, e.g. `at+jwt` (RFC 9068); not checked by default. */
  readonly typ?: string | undefined
  /** Tolerated clock difference for `exp`, `nbf` and `iat`; 5 seconds by default. */
  readonly clockTolerance?: Duration.Input | undefined
  /** How long a fetched key set is used before it is fetched again; 10 minutes by default. */
  readonly cacheMaxAge?: Duration.Input | undefined
  /** The least time between two fetches of the key set prompted by unknown `kid`s; 30 seconds by default. */
  readonly cooldown?: Duration.Input | undefined
  /** How long a request to the authorization server may take; 5 seconds by default. */
  readonly timeout?: Duration.Input | undefined
  /** Allows `http:` for the issuer's metadata (a loopback issuer); `https:` only otherwise. */
  readonly allowInsecureRequests?: boolean | undefined
  /**
   * The most bytes of the issuer's metadata or key set read; 1 MiB by default. A larger answer makes
   * verification unavailable (naming its URL and the limit) once that many bytes have arrived.
   */
  readonly maxResponseBytes?: number | undefined
}

// The jose error codes that judge the token; any other failure is the key set's retrieval.
const reasonOf = (error: unknown): InvalidTokenReason | undefined => {
  if (!(error instanceof joseErrors.JOSEError)) return undefined
  switch (error.code) {
    case "ERR_JWT_EXPIRED":
      return "Expired"
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const claim = (error as joseErrors.JWTClaimValidationFailed).claim
      return claim === "iss"
        ? "WrongIssuer"
        : claim === "aud"
          ? "WrongAudience"
          : claim === "nbf"
            ? "NotYetValid"
            : "InvalidClaims"
    }
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "BadSignature"
    case "ERR_JOSE_ALG_NOT_ALLOWED":
    case "ERR_JOSE_NOT_SUPPORTED":
      return "AlgorithmNotAllowed"
    case "ERR_JWKS_NO_MATCHING_KEY":
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return "UnknownKey"
    case "ERR_JWS_INVALID":
    case "ERR_JWT_INVALID":
      return "Malformed"
    default:
      return undefined
  }
}

/**
 * A JWT verifier; nothing is fetched until the first token. Throws a
 * `TypeError` for an `issuer` or `jwksUri` that is not a URL (configuration).
 */
export const make = (options: Options): TokenVerifierShape => {
  const http: Issuer.HttpOptions = {
    allowInsecureRequests: options.allowInsecureRequests,
    timeoutMs: Duration.toMillis(options.timeout ?? Duration.seconds(5)),
    maxResponseBytes: options.maxResponseBytes
  }
  const jwksOptions: RemoteJWKSetOptions = {
    // The key set is read within the limit, as every other answer.
    [customFetch]: Issuer.fetchOf(http),
    timeoutDuration: http.timeoutMs,
    cooldownDuration: Duration.toMillis(options.cooldown ?? Duration.seconds(30)),
    cacheMaxAge: Duration.toMillis(options.cacheMaxAge ?? Duration.minutes(10))
  }
  // Configuration errors surface when the verifier is made, not on the first request.
  new URL(options.issuer)
  const keys = Issuer.once(async () => {
    const uri = options.jwksUri ?? (await Issuer.discover(options.issuer, http)).jwks_uri
    if (uri === undefined) throw new Error("the issuer's metadata has no jwks_uri")
    return createRemoteJWKSet(new URL(uri), jwksOptions)
  })
  if (options.jwksUri !== undefined) new URL(options.jwksUri)
  const clockTolerance = Duration.toSeconds(options.clockTolerance ?? Duration.seconds(5))
  const verifyOptions = {
    issuer: options.issuer,
    audience: typeof options.audience === "string" ? options.audience : [...options.audience],
    algorithms: [...(options.algorithms ?? defaultAlgorithms)],
    clockTolerance,
    // RFC 9068 §2.2: an access token without `exp` would never expire.
    requiredClaims: ["exp"],
    ...(options.typ === undefined ? {} : { typ: options.typ })
  }

  // Made once (a generator function made per call costs its own generator prototype and map): run per request.
  const verify = Effect.fnUntraced(function* (
    token: string
  ): Effect.fn.Return<PrincipalShape, InvalidToken | VerifierUnavailable> {
    // A token that is not a JWS is refused before any key is looked up (or fetched).
    try {
      decodeProtectedHeader(token)
    } catch {
      return yield* new InvalidToken({ reason: "Malformed" })
    }
    const getKey = yield* Issuer.call("metadata", keys)
    const now = yield* Clock.currentTimeMillis
    const verified = yield* Effect.tryPromise({
      try: () => jwtVerify(token, getKey, { ...verifyOptions, currentDate: new Date(now) }),
      catch: (error) => {
        const reason = reasonOf(error)
        return reason === undefined
          ? new VerifierUnavailable({ step: "key set", detail: Issuer.describe(error) })
          : new InvalidToken({ reason })
      }
    })
    const principal = toPrincipal(verified.payload)
    if (principal instanceof InvalidToken) return yield* principal
    return principal
  }, Issuer.logFailure)

  return { verify }
}

/** {@link make} as the {@link TokenVerifier} of a protected resource. */
export const layer = (options: Options): Layer.Layer<TokenVerifier> => Layer.sync(TokenVerifier, () => make(options))
