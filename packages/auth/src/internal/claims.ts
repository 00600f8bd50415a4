/**
 * From a token's claims (or an introspection response) to a principal: the
 * claim names of RFC 9068 (JWT access tokens) and RFC 7662, with the common
 * variants (`scp` as an array, `azp` for the client).
 */
import { InvalidToken } from "../AuthError.ts"
import type { PrincipalShape } from "../Principal.ts"

const stringOf = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** `scope` (space-separated) or `scp` (array or string); anything else is no scope. */
export const scopesOf = (claims: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const raw = claims.scope ?? claims.scp
  if (typeof raw === "string") return raw.split(" ").filter((s) => s.length > 0)
  if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === "string")
  return []
}

/** `aud` as a list (RFC 7519 allows a single string). */
export const audienceOf = (claims: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const aud = claims.aud
  if (typeof aud === "string") return [aud]
  if (Array.isArray(aud)) return aud.filter((s): s is string => typeof s === "string")
  return []
}

/**
 * The principal of verified claims; `InvalidToken("InvalidClaims")` when
 * neither `sub` nor a client id names who the token is for.
 */
export const toPrincipal = (claims: Readonly<Record<string, unknown>>): PrincipalShape | InvalidToken => {
  const clientId = stringOf(claims.client_id) ?? stringOf(claims.azp)
  const subject = stringOf(claims.sub) ?? clientId
  if (subject === undefined) return new InvalidToken({ reason: "InvalidClaims" })
  const exp = claims.exp
  return {
    subject,
    clientId,
    issuer: stringOf(claims.iss),
    scopes: scopesOf(claims),
    audience: audienceOf(claims),
    expiresAt: typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined,
    claims
  }
}
