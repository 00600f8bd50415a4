/**
 * The service a protected resource verifies bearer tokens with. Two
 * implementations ship: `JwtVerifier` (JWT access tokens checked against the
 * authorization server's key set, no call per request) and
 * `IntrospectionVerifier` (any token, asked of the authorization server,
 * RFC 7662). Another one (a test double, a gateway's header) is a `Layer` of
 * this service.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { InvalidToken, VerifierUnavailable } from "./AuthError.ts"
import type { PrincipalShape } from "./Principal.ts"

/** Verifies a bearer token. */
export interface TokenVerifierShape {
  /**
   * The principal `token` speaks for, once it is known to be valid for this
   * resource (signature or introspection, issuer, audience, expiry). Fails
   * with `InvalidToken` (401) or `VerifierUnavailable` (503); neither carries
   * the token, and an implementation never logs it.
   */
  readonly verify: (token: string) => Effect.Effect<PrincipalShape, InvalidToken | VerifierUnavailable>
}

/** The token verifier of a protected resource. */
export class TokenVerifier extends Context.Service<TokenVerifier, TokenVerifierShape>()(
  "@effect-mcp/auth/TokenVerifier"
) {}

/** A verifier from a function: for tests and for tokens checked elsewhere. */
export const make = (verify: TokenVerifierShape["verify"]): TokenVerifierShape => ({ verify })

/** {@link make} as a Layer. */
export const layer = (verify: TokenVerifierShape["verify"]): Layer.Layer<TokenVerifier> =>
  Layer.succeed(TokenVerifier, make(verify))
