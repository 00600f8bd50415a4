/**
 * Why a client could not obtain an access token: one error per stage of the
 * flow (discovery, registration, authorization, the token endpoint). Each
 * names the stage and the URL or step that failed, and a description that
 * quotes no token, no code, no secret and no response body: these messages
 * reach logs, and a library's error may quote any of them.
 */
import * as Schema from "effect/Schema"

/** Protected resource or authorization server metadata could not be found or used. */
export class DiscoveryFailed extends Schema.TaggedError<DiscoveryFailed>()("DiscoveryFailed", {
  /** `protected resource metadata` or `authorization server metadata`. */
  step: Schema.String,
  /** The URL(s) tried, or the resource / issuer concerned. */
  url: Schema.String,
  /** What went wrong, quoting no token and no body. */
  detail: Schema.String
}) {
  override get message(): string {
    return `OAuth discovery failed: ${this.step} (${this.url}): ${this.detail}`
  }
}

/** The client could not be registered with the authorization server (or has no registration to use). */
export class RegistrationFailed extends Schema.TaggedError<RegistrationFailed>()("RegistrationFailed", {
  /** The authorization server's issuer. */
  issuer: Schema.String,
  /** What went wrong, quoting no secret. */
  detail: Schema.String
}) {
  override get message(): string {
    return `OAuth client registration at ${this.issuer} failed: ${this.detail}`
  }
}

/**
 * A grant did not yield a token: the user agent step, the redirect's checks
 * (`state`, RFC 9207 `iss`, an `error` answer), or the token endpoint.
 */
export class AuthorizationFailed extends Schema.TaggedError<AuthorizationFailed>()("AuthorizationFailed", {
  /** `user agent`, `redirect`, `authorization code grant`, `refresh`, `client credentials grant`. */
  step: Schema.String,
  /** What went wrong: an OAuth error code and the server's status, never a token or code. */
  detail: Schema.String,
  /**
   * The authorization server refused (a 4xx answer: `invalid_grant`, `invalid_client`, ...), as opposed to
   * not being reached or failing itself (a network error, a timeout, a 5xx), after which trying again may work.
   */
  refused: Schema.optional(Schema.Boolean)
}) {
  override get message(): string {
    return `OAuth authorization failed: ${this.step}: ${this.detail}`
  }
}

/** Any reason a client could not obtain an access token. */
export type OAuthClientError = DiscoveryFailed | RegistrationFailed | AuthorizationFailed
