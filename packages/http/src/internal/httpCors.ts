/**
 * CORS for the Streamable HTTP endpoint, so a web page on an allowed origin
 * can call the server: a preflight (`OPTIONS` with `Access-Control-Request-Method`)
 * from an allowed origin is answered with 204 and what may be sent; every
 * reply to an allowed origin names it in `Access-Control-Allow-Origin` and
 * exposes the MCP headers a client must read (`Mcp-Session-Id`,
 * `MCP-Protocol-Version`). Which origins are allowed is the DNS-rebinding
 * guard's decision (httpWire.ts): a refused origin gets its 403 before
 * anything here runs, and no CORS header ever names it.
 */
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { PARAM_PREFIX } from "../McpHeaders.ts"
import {
  HEADER_LAST_EVENT_ID,
  HEADER_METHOD,
  HEADER_NAME,
  HEADER_PROTOCOL_VERSION,
  HEADER_SESSION_ID,
  hostnameOf,
  loopbackHosts,
  type RebindingOptions
} from "./httpWire.ts"

/** Response headers a browser script may read: the ones a client needs to go on with the session. */
const exposed = [HEADER_SESSION_ID, HEADER_PROTOCOL_VERSION, "www-authenticate"].join(", ")

/** Request headers a client of any revision sends (the mirrored `Mcp-Param-*` ones are echoed as asked). */
const allowedHeaders = [
  "accept",
  "content-type",
  "authorization",
  HEADER_LAST_EVENT_ID,
  HEADER_SESSION_ID,
  HEADER_PROTOCOL_VERSION,
  HEADER_METHOD,
  HEADER_NAME
]

/** How long a browser may cache a preflight's answer, in seconds. */
const maxAgeSeconds = "600"

/**
 * Which request origins CORS answers: those the rebinding guard accepts (a
 * listed origin, or one whose host is allowed). With the guard turned off
 * only the listed origins: turning off the Host check does not open the
 * server to every web page. Returns the origin to name, or undefined.
 */
export const makeAllowedOrigin = (
  options: RebindingOptions | undefined
): ((request: HttpServerRequest.HttpServerRequest) => string | undefined) => {
  const origins = new Set((options?.allowedOrigins ?? []).map((o) => o.trim().toLowerCase()))
  const hosts =
    options?.dnsRebindingProtection === false
      ? new Set<string>()
      : new Set((options?.allowedHosts ?? loopbackHosts).map((h) => h.toLowerCase()))
  return (request) => {
    const origin = request.headers["origin"]
    if (origin === undefined) return undefined
    const lower = origin.trim().toLowerCase()
    if (origins.has(lower)) return origin.trim()
    const schemeEnd = lower.indexOf("://")
    return schemeEnd >= 0 && hosts.has(hostnameOf(lower.slice(schemeEnd + 3))) ? origin.trim() : undefined
  }
}

/** The headers added to every reply to an allowed origin. */
export const replyHeaders = (origin: string): Record<string, string> => ({
  "access-control-allow-origin": origin,
  "access-control-expose-headers": exposed,
  vary: "Origin"
})

/** Adds the CORS headers for `origin` to a reply. */
export const withCors = (
  response: HttpServerResponse.HttpServerResponse,
  origin: string
): HttpServerResponse.HttpServerResponse => HttpServerResponse.setHeaders(response, replyHeaders(origin))

/** Whether a request is a CORS preflight (not a plain `OPTIONS`). */
export const isPreflight = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined

/**
 * The answer to a preflight from an allowed origin: the methods the endpoint
 * serves and the headers asked for, when each is one an MCP client sends
 * (any `Mcp-Param-*` among them); a method the endpoint does not serve gets 405.
 */
export const preflight = (
  request: HttpServerRequest.HttpServerRequest,
  origin: string,
  methods: ReadonlyArray<string>
): HttpServerResponse.HttpServerResponse => {
  const method = request.headers["access-control-request-method"]!.trim().toUpperCase()
  if (!methods.includes(method)) {
    return HttpServerResponse.empty({ status: 405, headers: { allow: methods.join(", "), vary: "Origin" } })
  }
  const asked = (request.headers["access-control-request-headers"] ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== "" && (allowedHeaders.includes(h) || h.startsWith(PARAM_PREFIX)))
  return HttpServerResponse.empty({
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": methods.join(", "),
      "access-control-allow-headers": [...new Set([...allowedHeaders, ...asked])].join(", "),
      "access-control-max-age": maxAgeSeconds,
      vary: "Origin"
    }
  })
}
