/**
 * Reading a bearer access token from a request (RFC 6750 §2.1): only the
 * `Authorization` header is accepted. The query-string form (§2.3) puts the
 * token in URLs, which are logged, cached and sent as `Referer`; the MCP
 * authorization specification forbids it, so a request carrying one is refused
 * rather than served without it.
 */
import * as Effect from "effect/Effect"
import { InvalidRequest, MissingToken } from "./AuthError.ts"

// RFC 6750 §2.1 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const b64token = /^[A-Za-z0-9\-._~+/]+=*$/
// The scheme is case-insensitive (RFC 9110 §11.1); one or more spaces separate it from the token.
const bearer = /^bearer +(\S+) *$/i

/** What an `Authorization` header holds, as far as a bearer-protected resource is concerned. */
export type Credential =
  /** No `Authorization` header. */
  | { readonly _tag: "None" }
  /** Exactly one well-formed bearer token. */
  | { readonly _tag: "Token"; readonly token: string }
  /** Something else: another scheme, several tokens, or characters a bearer token cannot have. */
  | { readonly _tag: "Malformed"; readonly reason: InvalidRequest["reason"] }

const none: Credential = { _tag: "None" }

/**
 * Reads the `Authorization` header's value(s) without failing; `undefined` or
 * an empty array is no header. A plain function, since it runs on every request.
 */
export const parse = (header: string | ReadonlyArray<string> | undefined): Credential => {
  if (header === undefined) return none
  if (typeof header !== "string") {
    if (header.length === 0) return none
    if (header.length > 1) return { _tag: "Malformed", reason: "RepeatedHeader" }
    return parse(header[0])
  }
  const match = bearer.exec(header.trim())
  const token = match?.[1]
  if (token === undefined || !b64token.test(token)) return { _tag: "Malformed", reason: "MalformedHeader" }
  return { _tag: "Token", token }
}

/** Whether `url` (absolute, or a path with a query) carries an `access_token` query parameter. */
export const carriesAccessToken = (url: string | URL): boolean => {
  const search = typeof url === "string" ? queryOf(url) : url.search
  return search.length > 1 && new URLSearchParams(search).has("access_token")
}

const queryOf = (url: string): string => {
  const start = url.indexOf("?")
  if (start === -1) return ""
  const end = url.indexOf("#", start)
  return end === -1 ? url.slice(start) : url.slice(start, end)
}

/**
 * The bearer token of a request from its URL and `Authorization` header:
 * fails with {@link MissingToken} when there is none, and with
 * {@link InvalidRequest} when the header is malformed or repeated, or when the
 * URL carries a token in its query (even next to a good header).
 */
export const fromRequest = (request: {
  readonly url: string
  readonly authorization: string | ReadonlyArray<string> | undefined
}): Effect.Effect<string, MissingToken | InvalidRequest> => {
  if (carriesAccessToken(request.url)) return Effect.fail(new InvalidRequest({ reason: "TokenInQuery" }))
  const credential = parse(request.authorization)
  switch (credential._tag) {
    case "None":
      return Effect.fail(new MissingToken())
    case "Malformed":
      return Effect.fail(new InvalidRequest({ reason: credential.reason }))
    case "Token":
      return Effect.succeed(credential.token)
  }
}
