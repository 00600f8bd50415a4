/**
 * What the HTTP transports (Streamable HTTP and legacy SSE, both sides) share
 * on the wire: header names, SSE event text, JSON-RPC error replies with their
 * HTTP status, request-body limits and the DNS-rebinding checks.
 */
import type { HostChecks } from "../HttpServeOptions.ts"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import type * as HttpServerError from "effect/http/HttpServerError"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Result from "effect/Result"
import type * as McpMetrics from "@effect-mcp/engine/McpMetrics"

// The header names are McpHeaders' (one definition for every package); the
// transports' internals know them by these names.
export {
  LAST_EVENT_ID as HEADER_LAST_EVENT_ID,
  METHOD as HEADER_METHOD,
  NAME as HEADER_NAME,
  PROTOCOL_VERSION as HEADER_PROTOCOL_VERSION,
  SESSION_ID as HEADER_SESSION_ID
} from "../McpHeaders.ts"

export const CONTENT_JSON = "application/json"
export const CONTENT_SSE = "text/event-stream"

// ---------------------------------------------------------------------------
// SSE text
// ---------------------------------------------------------------------------

// The event text is SseEvent's (public, so the cluster's relay frames events as the servers do).
export { format as formatEvent, type SseEvent } from "../SseEvent.ts"

export const sseHeaders = { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" } as const

// ---------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------

/**
 * `response`, built without headers, with `headers` set on it one by one: the
 * way every reply with a body gets its headers. Handed to the body's
 * constructor (`HttpServerResponse.text(body, { headers })` and the like),
 * they are copied onto the Headers prototype with `Object.setPrototypeOf`:
 * with 32 calls in flight, interleaved in one server process, building a JSON
 * reply took 13-24 µs that way against 10-11 µs set afterwards. One by one
 * rather than with `setHeaders` (three copies of the map whatever their
 * number): hot, 222 against 328 ns for one header, 427 against 491 for three.
 */
export const withHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  headers: Readonly<Record<string, string>> | undefined
): HttpServerResponse.HttpServerResponse => {
  if (headers === undefined) return response
  let out = response
  for (const name of Object.keys(headers)) out = HttpServerResponse.setHeader(out, name, headers[name]!)
  return out
}

/** A JSON body with its status (an error reply, a JSON-mode result). */
export const jsonResponse = (
  status: number,
  body: JsonRpc.Message | ReadonlyArray<JsonRpc.Message>,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse =>
  withHeaders(HttpServerResponse.text(JsonRpcCodec.encode(body), { status, contentType: CONTENT_JSON }), headers)

/** An HTTP-level refusal carried as a JSON-RPC error (the official SDKs read it that way). */
export const errorResponse = (
  status: number,
  error: McpError.McpError,
  options?: { readonly id?: JsonRpc.RequestId | null | undefined; readonly headers?: Record<string, string> }
): HttpServerResponse.HttpServerResponse =>
  jsonResponse(status, McpError.toResponse(options?.id ?? null, error), options?.headers)

/**
 * The 400 (-32022) for a request whose `MCP-Protocol-Version` header names a
 * revision the server does not speak, which the transport MUST refuse on
 * every method; undefined when the header is absent or supported. `id`: the
 * request the refusal answers, when the body held one.
 */
export const unsupportedVersion = (
  version: string | undefined,
  supported: ReadonlyArray<string>,
  id: JsonRpc.RequestId | null = null
): HttpServerResponse.HttpServerResponse | undefined =>
  version === undefined || supported.includes(version)
    ? undefined
    : errorResponse(
        400,
        new McpError.UnsupportedProtocolVersion({
          message: `Bad Request: unsupported protocol version ${version}`,
          data: { requested: version, supported: [...supported] }
        }),
        { id }
      )

/**
 * The HTTP status a stateless revision (2026-07-28) gives a request answered
 * with a JSON-RPC error of these codes; other errors travel with 200 like results.
 */
export const errorStatusByCode: ReadonlyMap<number, number> = new Map([
  [-32700, 400], // Parse error
  [-32600, 400], // Invalid request
  [-32601, 404], // Method not found (unknown methods and the ones the revision removed)
  [-32602, 400], // Invalid params (a malformed `_meta` among them)
  [-32020, 400], // HeaderMismatch
  [-32021, 400], // MissingRequiredClientCapability
  [-32022, 400] // UnsupportedProtocolVersion
])

/** The status for a reply whose first message is `message`, when that is an error the table maps. */
export const errorStatusOf = (message: JsonRpc.Message | undefined): number | undefined =>
  message !== undefined && JsonRpc.isFailure(message) ? errorStatusByCode.get(message.error.code) : undefined

export const badRequest = (message: string, headers?: Record<string, string>) =>
  errorResponse(400, new McpError.InvalidRequest({ message: `Bad Request: ${message}` }), { headers: headers ?? {} })

/** Server-defined code for transport-level refusals (-32000), as the official SDKs use. */
export const transportError = (status: number, message: string, headers?: Record<string, string>) =>
  errorResponse(status, new McpError.JsonRpcError({ code: -32000, message }), { headers: headers ?? {} })

export const methodNotAllowed = (allow: string) => transportError(405, "Method Not Allowed", { allow })

// ---------------------------------------------------------------------------
// Request checks
// ---------------------------------------------------------------------------

/** Whether an Accept header admits `type` (exact type, `type/*` or `*\/*`). */
export const accepts = (accept: string | undefined, type: string): boolean => {
  if (accept === undefined) return false
  const [major] = type.split("/")
  for (const part of accept.split(",")) {
    const media = part.split(";")[0]!.trim().toLowerCase()
    if (media === type || media === "*/*" || media === `${major}/*`) return true
  }
  return false
}

// Clients send the same Accept on every POST: the last answer is reused.
let lastAccept: string | undefined
let lastAcceptsBoth = false

/** Whether an Accept header admits both JSON and SSE, as a Streamable HTTP POST must. */
export const acceptsJsonAndSse = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  if (accept !== lastAccept) {
    lastAcceptsBoth = accepts(accept, CONTENT_JSON) && accepts(accept, CONTENT_SSE)
    lastAccept = accept
  }
  return lastAcceptsBoth
}

export const isJsonContent = (contentType: string | undefined): boolean =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === CONTENT_JSON

/** The Host and Origin checks a server is given (see `HttpServeOptions.HostChecks`). */
export type RebindingOptions = HostChecks

export const loopbackHosts: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]", "::1"]

/** The host name of a `Host` value or of an origin's authority, lower case, without its port. */
export const hostnameOf = (host: string): string => {
  const h = host.trim().toLowerCase()
  if (h.startsWith("[")) {
    const end = h.indexOf("]")
    return end < 0 ? h : h.slice(0, end + 1)
  }
  const colon = h.indexOf(":")
  return colon < 0 ? h : h.slice(0, colon)
}

/**
 * Guards against DNS rebinding: a page on `evil.example.com` whose name now
 * resolves to 127.0.0.1 reaches a local server with its own Host and Origin.
 * Returns the refusal to send, or undefined when the request may proceed.
 */
export const makeRebindingGuard = (options: RebindingOptions | undefined) => {
  if (options?.dnsRebindingProtection === false) return (_: HttpServerRequest.HttpServerRequest) => undefined
  const hosts = new Set((options?.allowedHosts ?? loopbackHosts).map((h) => h.toLowerCase()))
  const origins = new Set((options?.allowedOrigins ?? []).map((o) => o.toLowerCase()))
  return (request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse | undefined => {
    const host = request.headers["host"] ?? request.headers[":authority"]
    if (host === undefined || !hosts.has(hostnameOf(host))) {
      return transportError(403, "Forbidden: invalid Host header")
    }
    const origin = request.headers["origin"]
    if (origin === undefined) return undefined
    const lower = origin.trim().toLowerCase()
    if (origins.has(lower)) return undefined
    const schemeEnd = lower.indexOf("://")
    if (schemeEnd < 0 || !hosts.has(hostnameOf(lower.slice(schemeEnd + 3)))) {
      return transportError(403, "Forbidden: invalid Origin header")
    }
    return undefined
  }
}

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------

// One per limit in use (a server has one): the reference is read on every body.
const byteSizes = new Map<number, ByteSize.ByteSize>()
const byteSizeOf = (limit: number): ByteSize.ByteSize => {
  let size = byteSizes.get(limit)
  if (size === undefined) {
    size = ByteSize.bytes(limit)
    byteSizes.set(limit, size)
  }
  return size
}

const isTooLarge = (error: HttpServerError.HttpServerError): boolean =>
  error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"

/**
 * Reads a request body of at most `limit` bytes and decodes it as one
 * JSON-RPC frame. A body over the limit is refused with 413 without being
 * buffered; an unreadable one with 400. The platform's own body reader does
 * the counting (its stream would cost a pull loop per request).
 */
export const readFrame = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number,
  meter?: McpMetrics.TransportMeter | undefined
): Effect.Effect<Result.Result<JsonRpcCodec.Decoded, HttpServerResponse.HttpServerResponse>> => {
  // Built only when needed: an error object captures a stack trace.
  const tooLarge = () => transportError(413, `Payload Too Large: the body exceeds ${limit} bytes`)
  const declared = request.headers["content-length"]
  if (declared !== undefined && Number(declared) > limit) return Effect.succeed(Result.fail(tooLarge()))
  return request.arrayBuffer.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, byteSizeOf(limit)),
    Effect.map((buffer) => {
      meter?.received(buffer.byteLength)
      const decoded = JsonRpcCodec.decodeBytes(new Uint8Array(buffer))
      return Result.isSuccess(decoded)
        ? Result.succeed(decoded.success)
        : Result.fail(jsonResponse(400, decoded.failure.toResponse()))
    }),
    Effect.catch((error) =>
      Effect.succeed(Result.fail(isTooLarge(error) ? tooLarge() : badRequest("the body could not be read")))
    )
  )
}

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

// The messages of a frame and the ids of its responses: read in one place (jsonRpcSniff.ts).
export { messagesOf, responseIdsOf } from "./jsonRpcSniff.ts"
