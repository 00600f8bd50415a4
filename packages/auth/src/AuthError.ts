/**
 * Why a request was not authorized, one error per HTTP answer a protected
 * resource gives (RFC 6750 §3.1): no credentials (401, no error code), a
 * malformed request (400 `invalid_request`), a token that does not verify
 * (401 `invalid_token`), a token without the needed scope (403
 * `insufficient_scope`), and an authorization server that cannot be reached
 * to verify a token (503).
 *
 * None of them carries the token or the cause of a library failure: their
 * messages reach logs and peers, and a library's error may quote the token,
 * its claims or a request body that contains it.
 */
import * as Schema from "effect/Schema"

/** The request carried no access token (RFC 6750 §3.1: the challenge then has no error code). */
export class MissingToken extends Schema.TaggedError<MissingToken>()("MissingToken", {}) {
  override get message(): string {
    return "no access token in the request"
  }
}

/**
 * The request carried credentials in a form that is refused (RFC 6750
 * `invalid_request`): an `Authorization` header that is not exactly one
 * Bearer token, several `Authorization` headers, or a token in the URL's query.
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  reason: Schema.Literals(["MalformedHeader", "RepeatedHeader", "TokenInQuery"])
}) {
  override get message(): string {
    return invalidRequestMessages[this.reason]
  }
}

const invalidRequestMessages: Record<InvalidRequest["reason"], string> = {
  MalformedHeader: "the Authorization header is not one Bearer token",
  RepeatedHeader: "more than one Authorization header",
  TokenInQuery: "access tokens are not accepted in the query string"
}

/** Why a token did not verify; safe to show to the client (it says nothing of the token's text). */
export type InvalidTokenReason =
  /** Not a well-formed token (not a JWS compact serialization, or a bad JSON header or payload). */
  | "Malformed"
  /** Past its `exp` (clock tolerance included). */
  | "Expired"
  /** Before its `nbf`. */
  | "NotYetValid"
  /** The signature does not verify. */
  | "BadSignature"
  /** Signed with an algorithm outside the verifier's allow-list. */
  | "AlgorithmNotAllowed"
  /** No key of the issuer's key set matches the token's `kid`. */
  | "UnknownKey"
  /** Issued by another authorization server. */
  | "WrongIssuer"
  /** Issued for another resource (RFC 8707): a token is accepted only by the resource it names. */
  | "WrongAudience"
  /** A required claim is missing or has the wrong type, or the token type is wrong. */
  | "InvalidClaims"
  /** The authorization server says the token is not active (revoked, expired, unknown). */
  | "Inactive"

/** The access token does not verify (401, RFC 6750 `invalid_token`). */
export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", {
  reason: Schema.Literals([
    "Malformed",
    "Expired",
    "NotYetValid",
    "BadSignature",
    "AlgorithmNotAllowed",
    "UnknownKey",
    "WrongIssuer",
    "WrongAudience",
    "InvalidClaims",
    "Inactive"
  ])
}) {
  override get message(): string {
    return invalidTokenMessages[this.reason]
  }
}

const invalidTokenMessages: Record<InvalidTokenReason, string> = {
  Malformed: "the access token is malformed",
  Expired: "the access token expired",
  NotYetValid: "the access token is not valid yet",
  BadSignature: "the access token's signature does not verify",
  AlgorithmNotAllowed: "the access token is signed with an algorithm that is not accepted",
  UnknownKey: "the access token is signed with an unknown key",
  WrongIssuer: "the access token was issued by another authorization server",
  WrongAudience: "the access token was issued for another resource",
  InvalidClaims: "the access token's claims are invalid",
  Inactive: "the access token is not active"
}

/** The token verified but lacks scopes the operation needs (403, RFC 6750 `insufficient_scope`). */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  /** Every scope the operation needs (the challenge's `scope`, so the client can ask for them all). */
  required: Schema.Array(Schema.String),
  /** The needed scopes the token lacks. */
  missing: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `insufficient scope: needs ${this.missing.join(" ")}`
  }
}

/**
 * The token could not be verified because the authorization server (its
 * metadata, key set or introspection endpoint) could not be reached or
 * answered unusably (503: the token may be fine).
 */
export class VerifierUnavailable extends Schema.TaggedError<VerifierUnavailable>()("VerifierUnavailable", {
  /** What failed, e.g. `key set`, `metadata`, `introspection`. */
  step: Schema.String,
  /** A description of the failure that quotes no token and no request body. */
  detail: Schema.String
}) {
  override get message(): string {
    return `cannot verify access tokens: ${this.step}: ${this.detail}`
  }
}

/** Any reason a request is not authorized. */
export type AuthError = MissingToken | InvalidRequest | InvalidToken | InsufficientScope | VerifierUnavailable
