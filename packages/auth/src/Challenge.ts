/**
 * The `WWW-Authenticate: Bearer ...` challenge of a protected resource
 * (RFC 6750 §3, RFC 9728 §5.1): built by the server on a 401 or 403, parsed
 * by the client to learn where the resource's metadata is and which scopes to
 * ask for.
 */
import * as Option from "effect/Option"
import type { AuthError } from "./AuthError.ts"
import { parse as parseHeader } from "./internal/wwwAuthenticate.ts"

/** The error codes of RFC 6750 §3.1. */
export type ErrorCode = "invalid_request" | "invalid_token" | "insufficient_scope"

/** A Bearer challenge's parameters. */
export interface Bearer {
  /** The URL of the resource's protected resource metadata (RFC 9728 §5.1). */
  readonly resourceMetadata?: string | undefined
  /** Scopes the client should ask for (the needed ones, for `insufficient_scope`). */
  readonly scope?: ReadonlyArray<string> | undefined
  /** The RFC 6750 error code; absent when the request had no credentials. */
  readonly error?: ErrorCode | undefined
  /** A description for developers; characters RFC 6750 does not allow there are dropped. */
  readonly errorDescription?: string | undefined
  /** The protection space, when the server names one. */
  readonly realm?: string | undefined
}

// RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E (no `"`, no `\`);
// a scope-token is %x21 / %x23-5B / %x5D-7E.
const descriptionChars = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g
const scopeToken = /^[\x21\x23-\x5b\x5d-\x7e]+$/

// A quoted-string (RFC 9110 §5.6.4) with `"` and `\` escaped; other octets outside
// printable ASCII cannot appear in a header, so they are dropped.
const quote = (value: string): string => `"${value.replace(/[^\x20-\x7e]/g, "").replace(/(["\\])/g, "\\$1")}"`

/**
 * The header value for a challenge: `Bearer` then its parameters in a fixed
 * order (realm, resource_metadata, scope, error, error_description), each a
 * quoted string. Scope tokens with characters RFC 6750 forbids are left out.
 */
export const format = (challenge: Bearer): string => {
  const params: Array<string> = []
  if (challenge.realm !== undefined) params.push(`realm=${quote(challenge.realm)}`)
  if (challenge.resourceMetadata !== undefined) params.push(`resource_metadata=${quote(challenge.resourceMetadata)}`)
  const scopes = challenge.scope?.filter((s) => scopeToken.test(s))
  if (scopes !== undefined && scopes.length > 0) params.push(`scope=${quote(scopes.join(" "))}`)
  if (challenge.error !== undefined) params.push(`error=${quote(challenge.error)}`)
  if (challenge.errorDescription !== undefined) {
    params.push(`error_description=${quote(challenge.errorDescription.replace(descriptionChars, ""))}`)
  }
  return params.length === 0 ? "Bearer" : `Bearer ${params.join(", ")}`
}

/** The HTTP status and challenge a protected resource answers an authorization failure with. */
export interface Answer {
  /** 400, 401, 403 or 503. */
  readonly status: 400 | 401 | 403 | 503
  /** The `WWW-Authenticate` value; absent for 503 (the token was not judged). */
  readonly challenge: string | undefined
}

/**
 * The answer to an authorization failure (RFC 6750 §3.1): 401 without error
 * code for a missing token, 400 `invalid_request`, 401 `invalid_token`, 403
 * `insufficient_scope` with every needed scope, 503 when the token could not
 * be verified. `scope` is what the resource asks for by default (its
 * supported or required scopes); the error's own scopes win for 403.
 */
export const answer = (
  error: AuthError,
  options: { readonly resourceMetadata: string; readonly scope?: ReadonlyArray<string> | undefined }
): Answer => {
  const base = { resourceMetadata: options.resourceMetadata, scope: options.scope }
  switch (error._tag) {
    case "MissingToken":
      return { status: 401, challenge: format(base) }
    case "InvalidRequest":
      return {
        status: 400,
        challenge: format({ ...base, error: "invalid_request", errorDescription: error.message })
      }
    case "InvalidToken":
      return { status: 401, challenge: format({ ...base, error: "invalid_token", errorDescription: error.message }) }
    case "InsufficientScope":
      return {
        status: 403,
        challenge: format({
          ...base,
          scope: error.required,
          error: "insufficient_scope",
          errorDescription: error.message
        })
      }
    case "VerifierUnavailable":
      return { status: 503, challenge: undefined }
  }
}

/** One challenge of a `WWW-Authenticate` header: its scheme and parameters (names lower-cased). */
export interface Parsed {
  /** The auth scheme as sent (compare case-insensitively). */
  readonly scheme: string
  /** The auth-params, names lower-cased, values unquoted. */
  readonly params: Readonly<Record<string, string>>
  /** The token68 form, when the challenge has one instead of parameters. */
  readonly token68: string | undefined
}

/**
 * Every challenge of `WWW-Authenticate` header value(s) (RFC 9110 §11.6.1),
 * in order; what cannot be parsed ends the list rather than failing, since a
 * client uses what it understood.
 */
export const parseAll = (header: string | ReadonlyArray<string>): ReadonlyArray<Parsed> =>
  typeof header === "string" ? parseHeader(header) : header.flatMap(parseHeader)

/**
 * The first Bearer challenge of `WWW-Authenticate` header value(s), else the
 * first DPoP one (a server that takes only DPoP-bound tokens challenges with
 * the same parameters, RFC 9449 §7.1), if any.
 */
export const parse = (header: string | ReadonlyArray<string>): Option.Option<Bearer> => {
  const all = parseAll(header)
  const found =
    all.find((c) => c.scheme.toLowerCase() === "bearer") ?? all.find((c) => c.scheme.toLowerCase() === "dpop")
  if (found === undefined) return Option.none()
  const { params } = found
  const error = params.error
  return Option.some({
    resourceMetadata: params.resource_metadata,
    scope: params.scope === undefined ? undefined : params.scope.split(" ").filter((s) => s.length > 0),
    error:
      error === "invalid_request" || error === "invalid_token" || error === "insufficient_scope" ? error : undefined,
    errorDescription: params.error_description,
    realm: params.realm
  })
}
