/**
 * The replies a receiving process makes itself for a forwarded exchange (an
 * unreadable body, a lost owner, an owner it could not reach, a refused hop)
 * and the headers one runner sets for another, which it strips from what
 * clients send.
 */
import * as LostAnswers from "@effect-mcp/http/LostAnswers"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as ClusterHeaders from "./headers.ts"

/** A JSON-RPC error (InvalidRequest, -32600) with no id, as the HTTP reply to a request that could not be read. */
export const errorBody = (status: number, message: string) =>
  HttpServerResponse.text(JsonRpcCodec.encode(McpError.toResponse(null, new McpError.InvalidRequest({ message }))), {
    status,
    contentType: "application/json"
  })

/**
 * The body of a request to forward, at most `limit` bytes (413 above it). A
 * declared length above the limit is refused before anything is read, as the
 * owner's own server does: a client declaring more than it sends would
 * otherwise hold the request open until Node's request timeout.
 */
export const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<string, HttpServerResponse.HttpServerResponse> => {
  const tooLarge = () => errorBody(413, `Payload Too Large: the body exceeds ${limit} bytes`)
  const declared = request.headers["content-length"]
  if (declared !== undefined && Number(declared) > limit) return Effect.fail(tooLarge())
  return request.text.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit)),
    Effect.mapError((error) =>
      error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
        ? tooLarge()
        : errorBody(400, "Bad Request: the body could not be read")
    )
  )
}

/**
 * The answer to a forwarded POST (its body) whose owner was lost before it
 * replied: an error per request, else 503. Its ids are read only then: a
 * reply that arrives needs no parse of the body here.
 */
export const lostReply = (body: string) => answeredWith(body, LostAnswers.lostResponse)

/**
 * The answer to a forwarded POST (its body) that reached no owner: none
 * could be located or connected to within the bound, which `why` names.
 * Nothing ran, so the error says so: the client may send it again.
 */
export const unreachedReply = (body: string, why: string) =>
  answeredWith(body, (id) =>
    McpError.toResponse(
      id,
      new McpError.InternalError({ message: `no process serving this session ${why}; the request did not run` })
    )
  )

const answeredWith = (body: string, answer: (id: JsonRpc.RequestId) => JsonRpc.Message) => {
  const answers = LostAnswers.answersJson(LostAnswers.requestsOf(body), answer)
  if (answers === undefined) return HttpServerResponse.empty({ status: 503, headers: { "retry-after": "1" } })
  return HttpServerResponse.text(answers, { status: 200, contentType: "application/json" })
}

// The names of `ClusterHeaders.PRIVATE` as an array: asked on every request, read by index.
const privateNames: ReadonlyArray<string> = [...ClusterHeaders.PRIVATE]

/** Whether a request carries any of the headers one runner sets for another (`ClusterHeaders.PRIVATE`). */
export const hasPrivate = (headers: Headers.Headers): boolean => {
  for (let i = 0; i < privateNames.length; i++) if (headers[privateNames[i]!] !== undefined) return true
  return false
}

/**
 * A copy of `headers` without the names `drop` says, built whole on the
 * prototype `Headers` share: `Headers.remove` deletes from a copy, which turns
 * it into a slow dictionary that every later header read on the request pays
 * for, and `Headers.fromRecordUnsafe` changes an object's prototype afterwards.
 */
const copyWithout = (headers: Headers.Headers, drop: (name: string) => boolean): Headers.Headers => {
  const rest: Record<string, string> = Object.create(Object.getPrototypeOf(headers))
  for (const name of Object.keys(headers)) if (!drop(name)) rest[name] = headers[name]!
  return rest as Headers.Headers
}

const isPrivate = (name: string): boolean => ClusterHeaders.PRIVATE.has(name)

/** One copy without them (a hop carries two: one `Headers.remove` copy each cost more). */
export const withoutPrivate = (headers: Headers.Headers): Headers.Headers => copyWithout(headers, isPrivate)

/** An owner's answer to a hop for a session whose shard it does not hold: it ran nothing. */
export const hopRefusal = HttpServerResponse.empty({
  status: 421,
  headers: { [ClusterHeaders.HOP_REFUSED]: "not-owner" }
})

export const logLost = (error: unknown) =>
  Effect.logWarning("the runner owning a session was lost while serving a request", error)
