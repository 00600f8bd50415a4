/**
 * The JWT bearer grant (RFC 7523 §2.1) for an MCP client: instead of a user
 * logging in, the client presents a signed assertion to the MCP server's
 * authorization server and gets an access token for it. Two extensions use it:
 * workload identity federation (the assertion is a token the platform issued
 * to the workload, e.g. a Kubernetes service account token or a CI job's OIDC
 * token) and enterprise-managed authorization (the assertion is an identity
 * assertion grant from the enterprise identity provider: see
 * {@link IdentityAssertion}).
 *
 * `OAuthClient.layer({ grant: "jwt_bearer", assertion })` uses it; the
 * {@link Assertion} is asked for an assertion for each token request, for the
 * authorization server and resource discovery found.
 */
import * as Effect from "effect/Effect"
import { jwtBearerGrantType } from "./internal/assertionGrants.ts"
import type { OAuthClientError } from "./OAuthClientError.ts"

/** The `grant_type` of the JWT bearer grant (RFC 7523). */
export const grantType: typeof jwtBearerGrantType = jwtBearerGrantType

/** What an assertion is for. */
export interface AssertionRequest {
  /** The issuer of the authorization server that will receive it (the assertion's audience). */
  readonly issuer: string
  /** The MCP server's resource identifier (RFC 8707). */
  readonly resource: string
  /** The scopes the token request asks for, if any. */
  readonly scope: ReadonlyArray<string> | undefined
}

/** Obtains the assertion for a token request. */
export type Assertion = (request: AssertionRequest) => Effect.Effect<string, OAuthClientError>

/**
 * An assertion that does not depend on the request: a fixed string, or an
 * effect run for each token request (reading a token file the platform
 * rotates, say).
 */
export const fixed = (assertion: string | Effect.Effect<string, OAuthClientError>): Assertion => {
  const effect = typeof assertion === "string" ? Effect.succeed(assertion) : assertion
  return () => effect
}
