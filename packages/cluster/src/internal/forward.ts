/**
 * An HTTP exchange carried through the cluster: the request as data (method,
 * path, headers, body) sent to the entity `McpSession`, keyed by the session
 * id, on the session's owner.
 *
 * A POST or DELETE goes as `Send`, a plain RPC: its reply comes back whole
 * (most replies are: JSON, an SSE reply complete at once, 202), or as its
 * head and the name of its body, which the owner keeps until the receiving
 * process pulls it with the streaming RPC `Rest`, event by event. A plain
 * RPC is two messages between the runners; a streaming one is about nine
 * (each chunk is acknowledged by one more RPC, then the stream's exit), and
 * on loopback each message costs a socket write and a wake-up of the other
 * process: the per-call routing cost was mostly those. A GET (a long-lived
 * stream) goes as `Http`, its reply a stream of strings whose first is its
 * head.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpMethod from "effect/http/HttpMethod"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Rpc from "effect/rpc/Rpc"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { HEADER_SECRET as HEADER_HOP } from "../DirectHop.ts"

/** A request as the owner receives it. */
export const Exchange = Schema.Struct({
  method: Schema.String,
  url: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.String
})
export type Exchange = typeof Exchange.Type

/** An HTTP exchange, its reply streamed back (a GET). */
export const Http = Rpc.make("Http", { payload: Exchange, success: Schema.String, stream: true })

/** The reply to `Send`: whole, or its head and the name of the rest of its body. */
export const Reply = Schema.Struct({
  status: Schema.Number,
  contentType: Schema.UndefinedOr(Schema.String),
  headers: Schema.Record(Schema.String, Schema.String),
  /** The whole body (empty when `rest` names it or there is none). */
  body: Schema.String,
  /** The name under which the owner keeps a body it streams: pull it with `Rest`. */
  rest: Schema.UndefinedOr(Schema.String),
  /** The owner refused to run the exchange: it was in flight on the session's lost owner. */
  lost: Schema.Boolean,
  /** The owner's direct hop (DirectHop.encodeTarget), when it offers one. */
  via: Schema.UndefinedOr(Schema.String)
})
export type Reply = typeof Reply.Type

/** An HTTP exchange whose reply comes back as one message (a POST or DELETE). */
export const Send = Rpc.make("Send", { payload: Exchange, success: Reply })

/** The body of a reply to `Send` that the owner streams, event by event. */
export const Rest = Rpc.make("Rest", {
  payload: Schema.Struct({ name: Schema.String }),
  success: Schema.String,
  stream: true
})

/**
 * A clustered Streamable HTTP session: the entity keyed by its `Mcp-Session-Id`.
 * No client span per forwarded message: the HTTP server's span covers the exchange.
 */
export const McpSession = Entity.make("McpSession", [Http, Send, Rest]).annotate(
  ClusterSchema.ClientTracingEnabled,
  false
)

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
/**
 * Asks the owner to answer `lost` without running anything: sent after a hop
 * to the owner broke, it is answered by the owner if it lives, else by the
 * session's next owner once effect/cluster moved the shard.
 */
export const HEADER_LOST_PROBE = "x-effect-mcp-cluster-lost-probe"

/** The reply an owner gives an exchange it refuses to run: it was in flight on the session's lost owner. */
export const LOST = `${HEAD_MARK}{"lost":true}`

/**
 * The request of an exchange, for the owner's Streamable HTTP server. Built
 * as a client request, whose body the server reads as the bytes it holds (a
 * web `Request` would read them back through a web stream).
 */
export const toRequest = (exchange: Exchange): HttpServerRequest.HttpServerRequest => {
  const request = HttpClientRequest.make(exchange.method as HttpMethod.HttpMethod)(`http://cluster${exchange.url}`, {
    headers: exchange.headers
  })
  return HttpServerRequest.fromClientRequest(
    exchange.method === "POST"
      ? HttpClientRequest.setBody(request, HttpBody.text(exchange.body, exchange.headers["content-type"]))
      : request
  )
}

const privateHeaders = new Set([HEADER_NEW_SESSION, HEADER_CLIENT, HEADER_SENT_AT, HEADER_LOST_PROBE, HEADER_HOP])

/** The exchange of a request whose body was read already, with the headers this process adds. */
export const toExchange = (
  request: HttpServerRequest.HttpServerRequest,
  body: string,
  extra: Record<string, string>
): Exchange => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (!privateHeaders.has(name)) headers[name] = value
  }
  Object.assign(headers, extra)
  return { method: request.method, url: request.url, headers, body }
}

/**
 * The headers of an exchange from Node's parsed headers (the Node relay's
 * requests): the private ones dropped, repeated ones joined, `sentAt` added.
 */
export const nodeExchangeHeaders = (
  headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined },
  sentAt: number
): Record<string, string> => {
  const exchange: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined || privateHeaders.has(name)) continue
    exchange[name] = typeof value === "string" ? value : value.join(", ")
  }
  exchange[HEADER_SENT_AT] = String(sentAt)
  return exchange
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

/** The reply to `Send` of an exchange the owner refused to run. */
export const lostReply: Reply = {
  status: 503,
  contentType: undefined,
  headers: {},
  body: "",
  rest: undefined,
  lost: true,
  via: undefined
}

/**
 * How long (ms) an owner keeps a streamed body nobody pulled: the receiving
 * process asks for it as soon as the head arrives, unless it was lost meanwhile.
 */
const KEEP_MS = 30_000

/** The bodies an owner streams, kept from `Send` to `Rest`. */
class Kept {
  private readonly bodies = new Map<
    string,
    { readonly body: Stream.Stream<string>; readonly timer: Fiber.Fiber<void> }
  >()

  keep(body: Stream.Stream<string>): Effect.Effect<string> {
    const name = crypto.randomUUID()
    // Nobody came for it: it is started and interrupted at once, so its finalizers end the exchange.
    const drop = Effect.suspend(() => {
      this.bodies.delete(name)
      return Effect.flatMap(Effect.forkChild(Stream.runDrain(body)), (fiber) =>
        Effect.andThen(Effect.yieldNow, Fiber.interrupt(fiber))
      )
    })
    return Effect.map(Effect.forkDetach(Effect.andThen(Effect.sleep(KEEP_MS), drop)), (timer) => {
      this.bodies.set(name, { body, timer })
      return name
    })
  }

  take(name: string): Stream.Stream<string> | undefined {
    const kept = this.bodies.get(name)
    if (kept === undefined) return undefined
    this.bodies.delete(name)
    kept.timer.interruptUnsafe()
    return kept.body
  }
}

/** A reply as the answer to `Send`: whole, or its head with its streamed body kept for `Rest`. */
const toReply = (
  response: HttpServerResponse.HttpServerResponse,
  kept: Kept,
  via: string | undefined
): Effect.Effect<Reply> => {
  const body = response.body
  const reply: Reply = {
    status: response.status,
    contentType: body._tag === "Empty" ? undefined : body.contentType,
    headers: withoutLength(response.headers),
    body: "",
    rest: undefined,
    lost: false,
    via
  }
  switch (body._tag) {
    case "Uint8Array":
      return Effect.succeed({ ...reply, body: body.text ?? decoder.decode(body.body) })
    case "Raw":
      return Effect.succeed({ ...reply, body: typeof body.body === "string" ? body.body : String(body.body) })
    case "Stream":
      return Effect.map(kept.keep(body.stream.pipe(Stream.decodeText, Stream.orDie)), (name) => ({
        ...reply,
        rest: name
      }))
    default:
      return Effect.succeed(reply)
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

/**
 * Runs an owner's handler for an exchange and sends its reply back; `via`
 * (the owner's direct hop, when it offers one) goes with each `Send` reply.
 */
export const serveExchange = (
  serve: (exchange: Exchange) => Effect.Effect<HttpServerResponse.HttpServerResponse | undefined>,
  via?: string | undefined
) => {
  const kept = new Kept()
  return McpSession.of({
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
          ),
    Send: (request) =>
      request.payload.headers[HEADER_LOST_PROBE] !== undefined
        ? Effect.succeed(lostReply)
        : Effect.flatMap(serve(request.payload), (response) =>
            response === undefined ? Effect.succeed(lostReply) : toReply(response, kept, via)
          ),
    // A body this runner does not keep was kept by the session's former owner, lost since
    // (the cluster re-sent the pull here): what it still owed is answered with errors.
    Rest: (request) => {
      const body = Option.isSome(request.lastSentChunk) ? undefined : kept.take(request.payload.name)
      return body ?? Stream.succeed(LOST)
    }
  })
}
