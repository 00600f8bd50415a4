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
 * stream) goes as `Http`, its reply a stream whose first part is its head
 * (a `Head`), then the body's text. Heads and the `Lost` marker are data of
 * their own in the RPC's Schema, never mixed into body text.
 */
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
import * as ClusterHeaders from "./headers.ts"

/** A request as the owner receives it. */
export const Exchange = Schema.Struct({
  method: Schema.String,
  url: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.String
})
export type Exchange = typeof Exchange.Type

/** The head of a reply streamed by `Http`: its first part. */
export const Head = Schema.TaggedStruct("Head", {
  status: Schema.Number,
  contentType: Schema.UndefinedOr(Schema.String),
  headers: Schema.Record(Schema.String, Schema.String),
  /** The body is known whole: it is the one part after the head (none when there is no content type). */
  whole: Schema.Boolean
})
export type Head = typeof Head.Type

/**
 * The owner refused to run the exchange (it was in flight on the session's
 * lost owner), or does not keep the body pulled. After other parts it shows
 * the exchange was started again: the cluster re-sent it to the session's
 * new owner after its owner was lost mid-reply.
 */
export const Lost = Schema.TaggedStruct("Lost", {})
export type Lost = typeof Lost.Type

/** The reply of an owner that refused to run the exchange. */
export const LOST: Lost = { _tag: "Lost" }

/** A part of a reply to `Http`: its head, then its body's text; or `Lost`. */
export const Part = Schema.Union([Schema.String, Head, Lost])
export type Part = typeof Part.Type

/** A part of a body pulled with `Rest`: its text, or `Lost`. */
export const BodyPart = Schema.Union([Schema.String, Lost])
export type BodyPart = typeof BodyPart.Type

/** Whether a part is a reply's head. */
export const isHead = (part: Part): part is Head => typeof part !== "string" && part._tag === "Head"

/** An HTTP exchange, its reply streamed back (a GET). */
export const Http = Rpc.make("Http", { payload: Exchange, success: Part, stream: true })

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
  success: BodyPart,
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

// The headers set by the receiving process for its owner, never taken from a
// client: named in headers.ts, and here under these names as well, which the
// tests use.
export {
  CLIENT as HEADER_CLIENT,
  LOST_PROBE as HEADER_LOST_PROBE,
  NEW_SESSION as HEADER_NEW_SESSION,
  SENT_AT as HEADER_SENT_AT
} from "./headers.ts"

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

const privateHeaders = new Set([
  ClusterHeaders.NEW_SESSION,
  ClusterHeaders.CLIENT,
  ClusterHeaders.SENT_AT,
  ClusterHeaders.LOST_PROBE,
  ClusterHeaders.HOP
])

/** `exchange` without its send time: it reached no owner (see `ClusterHeaders.SENT_AT`). */
export const withoutSentAt = (exchange: Exchange): Exchange => {
  const { [ClusterHeaders.SENT_AT]: _, ...headers } = exchange.headers
  return { ...exchange, headers }
}

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
  exchange[ClusterHeaders.SENT_AT] = String(sentAt)
  return exchange
}

const decoder = new TextDecoder()

// The body is re-chunked on its way back: its length is the receiving server's to set.
const withoutLength = (headers: { readonly [name: string]: string }): Record<string, string> => {
  const copy: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (name !== "content-length") copy[name] = value
  return copy
}

/** A reply as the parts of the RPC stream: its head, then its body. */
export const toParts = (response: HttpServerResponse.HttpServerResponse): Stream.Stream<Part> => {
  const body = response.body
  const head: Head = {
    _tag: "Head",
    status: response.status,
    contentType: body._tag === "Empty" ? undefined : body.contentType,
    headers: withoutLength(response.headers),
    whole: body._tag !== "Stream"
  }
  // A body known whole goes in the same chunk as the head: one message between the runners.
  switch (body._tag) {
    case "Uint8Array":
      return Stream.fromArray<Part>([head, body.text ?? decoder.decode(body.body)])
    case "Raw":
      return Stream.fromArray<Part>([head, typeof body.body === "string" ? body.body : String(body.body)])
    case "Stream":
      return Stream.concat(Stream.succeed<Part>(head), body.stream.pipe(Stream.decodeText, Stream.orDie))
    default:
      return Stream.succeed(head)
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
        ? Stream.succeed<Part>(LOST)
        : Stream.unwrap(
            Effect.map(serve(request.payload), (response) =>
              response === undefined ? Stream.succeed<Part>(LOST) : toParts(response)
            )
          ),
    Send: (request) =>
      request.payload.headers[ClusterHeaders.LOST_PROBE] !== undefined
        ? Effect.succeed(lostReply)
        : Effect.flatMap(serve(request.payload), (response) =>
            response === undefined ? Effect.succeed(lostReply) : toReply(response, kept, via)
          ),
    // A body this runner does not keep was kept by the session's former owner, lost since
    // (the cluster re-sent the pull here): what it still owed is answered with errors.
    Rest: (request) => {
      const body = Option.isSome(request.lastSentChunk) ? undefined : kept.take(request.payload.name)
      return body ?? Stream.succeed<BodyPart>(LOST)
    }
  })
}
