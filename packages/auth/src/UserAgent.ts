/**
 * The user-agent step of the authorization code flow: the user is sent to the
 * authorization URL, logs in and consents, and the authorization server
 * redirects to the client's redirect URI. A service, since how that happens is
 * the host's business: a browser and a loopback listener for a command-line
 * host, a scripted login in tests.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AuthorizationFailed } from "./OAuthClientError.ts"

/** Runs the user-agent step. */
export interface UserAgentShape {
  /** The redirect URI to register and send (where {@link authorize} receives the answer). */
  readonly redirectUri: string
  /**
   * Sends the user to `authorizationUrl` and returns the URL the
   * authorization server redirected to (the redirect URI with `code`,
   * `state`, `iss` or `error`); the client checks it. Fails with
   * `AuthorizationFailed` (step `user agent`) when no redirect arrives.
   */
  readonly authorize: (authorizationUrl: URL) => Effect.Effect<URL, AuthorizationFailed>
}

/** The user agent of an OAuth client. */
export class UserAgent extends Context.Service<UserAgent, UserAgentShape>()("@effect-mcp/auth/UserAgent") {}

/** A user agent from its redirect URI and a function. */
export const make = (redirectUri: string, authorize: UserAgentShape["authorize"]): UserAgentShape => ({
  redirectUri,
  authorize
})

/** {@link make} as a Layer. */
export const layer = (redirectUri: string, authorize: UserAgentShape["authorize"]): Layer.Layer<UserAgent> =>
  Layer.succeed(UserAgent, make(redirectUri, authorize))
