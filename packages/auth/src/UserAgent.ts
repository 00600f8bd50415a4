/**
 * The user-agent step of the authorization code flow: the user is sent to the
 * authorization URL, logs in and consents, and the authorization server
 * redirects to the client's redirect URI. A service, since how that happens is
 * the host's business: a browser and a loopback listener for a command-line
 * host, a scripted login in tests.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { isLoopbackHost } from "./internal/loopback.ts"
import type { AuthorizationFailed } from "./OAuthClientError.ts"

/**
 * A redirect URI the MCP authorization spec forbids (2025-03-26 on: redirect
 * URIs MUST be localhost URLs or HTTPS URLs): `NotAUrl`, `NotLoopbackOrHttps`
 * (plain `http:` to a non-loopback host, or another scheme), or `Fragment`
 * (OAuth forbids a fragment in a redirect URI).
 */
export class InvalidRedirectUri extends Schema.TaggedError<InvalidRedirectUri>()("InvalidRedirectUri", {
  redirectUri: Schema.String,
  reason: Schema.Literals(["NotAUrl", "NotLoopbackOrHttps", "Fragment"])
}) {
  override get message(): string {
    const why =
      this.reason === "NotAUrl"
        ? "is not an absolute URL"
        : this.reason === "Fragment"
          ? "has a fragment"
          : "must be https:, or http: to a loopback host (localhost, 127.0.0.1, [::1])"
    return `redirect URI ${JSON.stringify(this.redirectUri)} ${why}`
  }
}

/**
 * Checks a redirect URI: undefined when it is `https:`, or `http:` to a
 * loopback host (where a native host listens, as the Node loopback user
 * agent does), without a fragment; the reason it is refused otherwise.
 */
export const checkRedirectUri = (redirectUri: string): InvalidRedirectUri | undefined => {
  let url: URL
  try {
    url = new URL(redirectUri)
  } catch {
    return new InvalidRedirectUri({ redirectUri, reason: "NotAUrl" })
  }
  if (url.hash !== "" || redirectUri.includes("#")) return new InvalidRedirectUri({ redirectUri, reason: "Fragment" })
  if (url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname))) return undefined
  return new InvalidRedirectUri({ redirectUri, reason: "NotLoopbackOrHttps" })
}

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

/**
 * A user agent from its redirect URI and a function. The redirect URI must
 * pass {@link checkRedirectUri}: a bad one is a programming error, thrown as
 * the typed `InvalidRedirectUri` (use {@link layer} to get it as a failure).
 * The OAuth client checks again whatever user agent it is given, so one made
 * by hand (`UserAgent.of`) cannot get around the rule.
 *
 * @throws InvalidRedirectUri
 */
export const make = (redirectUri: string, authorize: UserAgentShape["authorize"]): UserAgentShape => {
  const invalid = checkRedirectUri(redirectUri)
  if (invalid !== undefined) throw invalid
  return { redirectUri, authorize }
}

/** {@link make} as a Layer; a redirect URI that is not loopback or HTTPS fails it with `InvalidRedirectUri`. */
export const layer = (
  redirectUri: string,
  authorize: UserAgentShape["authorize"]
): Layer.Layer<UserAgent, InvalidRedirectUri> =>
  Layer.effect(
    UserAgent,
    Effect.suspend(() => {
      const invalid = checkRedirectUri(redirectUri)
      return invalid === undefined ? Effect.succeed(make(redirectUri, authorize)) : Effect.fail(invalid)
    })
  )
