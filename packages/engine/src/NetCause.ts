/**
 * Why a network operation failed, in words a person can act on. An HTTP
 * client's own error says only "Transport error (POST url)"; the reason is
 * the system error along its chain of causes (`ECONNREFUSED`, `ENOTFOUND`, a
 * TLS certificate code, undici's `UND_ERR_*`), which this finds and names,
 * keeping the code so a script can match on it.
 */
import * as Predicate from "effect/Predicate"

/** What each well-known code means, said the way a person would check it. */
const phrases: { readonly [code: string]: string } = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by the server",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed (temporary DNS failure)",
  EAI_NONAME: "host not found",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  EPIPE: "connection closed while sending",
  EPROTO: "TLS handshake failed (is it an http:// server?)",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  UND_ERR_HEADERS_TIMEOUT: "no response headers in time",
  UND_ERR_BODY_TIMEOUT: "the response body stalled",
  UND_ERR_SOCKET: "the server closed the connection",
  UND_ERR_CLOSED: "the connection was closed",
  CERT_HAS_EXPIRED: "TLS certificate expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS certificate chain has a self-signed certificate",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate could not be verified",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "TLS certificate issuer unknown",
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS certificate does not match the host name"
}

const maxDepth = 8

/** The errors directly behind `error`: its `cause`, an HttpClientError's `reason`, an AggregateError's `errors`. */
const behind = (error: object): ReadonlyArray<unknown> => {
  const e = error as { readonly cause?: unknown; readonly reason?: unknown; readonly errors?: unknown }
  const next: Array<unknown> = []
  if (e.cause !== undefined) next.push(e.cause)
  if (Predicate.isObject(e.reason)) next.push(e.reason)
  if (Array.isArray(e.errors)) next.push(...e.errors)
  return next
}

/** The first system error code (a string `code` like `ECONNREFUSED`) along `error`'s causes, breadth first. */
export const codeOf = (error: unknown): string | undefined => {
  let level: ReadonlyArray<unknown> = [error]
  for (let depth = 0; depth < maxDepth && level.length > 0; depth++) {
    const next: Array<unknown> = []
    for (const current of level) {
      if (!Predicate.isObject(current)) continue
      const code = (current as { readonly code?: unknown }).code
      if (typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code)) return code
      next.push(...behind(current))
    }
    level = next
  }
  return undefined
}

/** The message of the deepest error along the first chain of causes (the one closest to the system). */
const deepestMessage = (error: unknown): string | undefined => {
  let found: string | undefined
  let current = error
  for (let depth = 0; depth < maxDepth && Predicate.isObject(current); depth++) {
    const message = (current as { readonly message?: unknown }).message
    if (typeof message === "string" && message !== "") found = message
    current = behind(current)[0]
  }
  return found
}

/**
 * `error` in a few words: the meaning of its system code and the code
 * (`connection refused (ECONNREFUSED)`), else the innermost message.
 */
export const describe = (error: unknown): string => {
  const code = codeOf(error)
  if (code !== undefined) {
    const phrase = phrases[code] ?? (code.startsWith("ERR_TLS") || code.includes("CERT") ? "TLS failed" : undefined)
    if (phrase !== undefined) return `${phrase} (${code})`
    const message = deepestMessage(error) ?? "failed"
    return message.includes(code) ? message : `${message} (${code})`
  }
  return deepestMessage(error) ?? String(error)
}
