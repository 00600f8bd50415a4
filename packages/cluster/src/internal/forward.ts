/**
 * An HTTP exchange carried through the cluster: the request as data (method,
 * path, headers, body), and the reply as a stream of strings whose first is
 * its head (status, content type, headers) and the rest its body, so an SSE
 * reply flows back event by event. The entity `McpSession`, keyed by the
 * session id, has one streaming RPC carrying it to the session's owner.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Entity from "effect/cluster/Entity"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Rpc from "effect/rpc/Rpc"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** A request as the owner receives it. */
export const Exchange = Schema.Struct({
  method: Schema.String,
  url: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.String
})
export type Exchange = typeof Exchange.Type

/** The one RPC of a session entity: an HTTP exchange, its reply streamed back. */
export const Http = Rpc.make("Http", { payload: Exchange, success: Schema.String, stream: true })

/** A clustered Streamable HTTP session: the entity keyed by its `Mcp-Session-Id`. */
export const McpSession = Entity.make("McpSession", [Http])

/** The head of a reply, sent first. */
export interface Head {
  readonly status: number
  readonly contentType: string | undefined
  readonly headers: Record<string, string>
  /** The body is known whole: it is the one string after the head (none when there is no content type). */
  readonly whole: boolean
}

/**
 * Leads the head of a reply. Body text never holds a NUL (JSON escapes it),
 * so a second head in one reply shows the exchange was started again: the
 * cluster re-sent it to the session's new owner after its owner was lost.
 */
export const HEAD_MARK = "\u0000"

/** Headers set by the receiving process for its owner, never taken from a client. */
export const HEADER_NEW_SESSION = "x-effect-mcp-cluster-session"
export const HEADER_CLIENT = "x-effect-mcp-cluster-client"
/** When the receiving process sent an exchange (epoch ms): an owner refuses one sent before it took the session. */
export const HEADER_SENT_AT = "x-effect-mcp-cluster-sent-at"

/** The reply an owner gives an exchange it refuses to run: it was in flight on the session's lost owner. */
export const LOST = `${HEAD_MARK}{"lost":true}`

/** The request of an exchange, for the owner's Streamable HTTP server. */
export const toRequest = (exchange: Exchange): HttpServerRequest.HttpServerRequest =>
  HttpServerRequest.fromWeb(
    new Request(
      `http://cluster${exchange.url}`,
      exchange.method === "POST"
        ? { method: "POST", headers: exchange.headers, body: exchange.body }
        : { method: exchange.method, headers: exchange.headers }
    )
  )

/** The exchange of a request whose body was read already, with the headers this process adds. */
export const toExchange = (
  request: HttpServerRequest.HttpServerRequest,
  body: string,
  extra: Record<string, string>
): Exchange => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (name !== HEADER_NEW_SESSION && name !== HEADER_CLIENT && name !== HEADER_SENT_AT) headers[name] = value
  }
  Object.assign(headers, extra)
  return { method: request.method, url: request.url, headers, body }
}

const decoder = new TextDecoder()

// The body is re-chunked on its way back: its length is the receiving server's to set.
const withoutLength = (headers: { readonly [name: string]: string }): Record<string, string> => {
  const copy: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (name !== "content-length") copy[name] = value
  return copy
}

/** A reply as the strings of the RPC stream: its head, then its body. */
export const toStrings = (response: HttpServerResponse.HttpServerResponse): Stream.Stream<string> => {
  const body = response.body
  const head: Head = {
    status: response.status,
    contentType: body._tag === "Empty" ? undefined : body.contentType,
    headers: withoutLength(response.headers),
    whole: body._tag !== "Stream"
  }
  const headText = HEAD_MARK + JSON.stringify(head)
  const first = Stream.succeed(headText)
  // A body known whole goes in the same chunk as the head: one message between the runners.
  switch (body._tag) {
    case "Uint8Array":
      return Stream.fromArray([headText, body.text ?? decoder.decode(body.body)])
    case "Raw":
      return Stream.fromArray([headText, typeof body.body === "string" ? body.body : String(body.body)])
    case "Stream":
      return Stream.concat(first, body.stream.pipe(Stream.decodeText, Stream.orDie))
    default:
      return first
  }
}

/** The ids of the requests a POST body carries (to answer them if their owner is lost). */
export const requestIdsOf = (body: string): Array<JsonRpc.RequestId> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return []
  }
  const ids: Array<JsonRpc.RequestId> = []
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const m = message as { readonly id?: unknown; readonly method?: unknown } | null
    if (typeof m?.method === "string" && (typeof m.id === "string" || typeof m.id === "number")) ids.push(m.id)
  }
  return ids
}

/** The answer to a request whose owner was lost before it answered. */
export const lostResponse = (id: JsonRpc.RequestId): JsonRpc.Message =>
  JsonRpc.failure(
    id,
    McpError.toErrorObject(
      new McpError.InternalError({
        message: "the process serving this session was lost before the request completed; it may not have run"
      })
    )
  )

/**
 * Follows an SSE reply's events to know which requests were answered: the
 * ids of the responses among them. Lines may be split between chunks.
 */
export class AnsweredIds {
  private rest = ""
  readonly pending: Set<JsonRpc.RequestId>
  constructor(ids: ReadonlyArray<JsonRpc.RequestId>) {
    this.pending = new Set(ids)
  }
  see(chunk: string): void {
    if (this.pending.size === 0) return
    const text = this.rest + chunk
    const end = text.lastIndexOf("\n")
    if (end < 0) {
      this.rest = text
      return
    }
    this.rest = text.slice(end + 1)
    for (const line of text.slice(0, end).split("\n")) {
      if (!line.startsWith("data:")) continue
      try {
        const message = JSON.parse(line.slice(5)) as { readonly id?: JsonRpc.RequestId; readonly method?: unknown }
        if (message.id !== undefined && message.method === undefined) this.pending.delete(message.id)
      } catch {
        // Not a JSON line (a priming event): nothing to follow.
      }
    }
  }
}

/** An SSE event answering each request still pending. */
export const lostEvents = (ids: Iterable<JsonRpc.RequestId>): string => {
  let text = ""
  for (const id of ids) text += `event: message\ndata: ${JSON.stringify(lostResponse(id))}\n\n`
  return text
}

/** Runs an owner's handler for an exchange and streams its reply back. */
export const serveExchange = (
  serve: (exchange: Exchange) => Effect.Effect<HttpServerResponse.HttpServerResponse | undefined>
) =>
  McpSession.of({
    Http: (request) =>
      // Re-sent after this session's former owner had streamed part of the reply: that part
      // reached the client, the rest is lost with its runner. Running the request again could
      // repeat its effects, so the receiving process answers it with an error instead.
      Option.isSome(request.lastSentChunk)
        ? Stream.succeed(LOST)
        : Stream.unwrap(
            Effect.map(serve(request.payload), (response) =>
              response === undefined ? Stream.succeed(LOST) : toStrings(response)
            )
          )
  })
