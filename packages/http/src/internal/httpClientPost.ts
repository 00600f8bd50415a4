/**
 * One POST of the Streamable HTTP client: the frame's headers (session id,
 * revision, the stateless revision's routing and `Mcp-Param-*` headers), its
 * body, and its reply read to the end: 202, a JSON body, or an SSE stream
 * (resumed when it drops). A refusal carrying JSON-RPC errors answers the
 * frame's requests; an `initialize` POST refused the way a 2024-11-05 server
 * refuses falls back to the legacy transport; a 404 expires the session.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as Tracing from "@effect-mcp/engine/Tracing"
import * as BareRequests from "../BareRequests.ts"
import * as Transport from "@effect-mcp/engine/Transport"
import type { Slot } from "./httpClientOrder.ts"
import type * as PostOrder from "./httpClientOrder.ts"
import type { HttpClientSession } from "./httpClientSession.ts"
import * as HttpClientSse from "./httpClientSse.ts"
import * as Headers from "./httpHeaders.ts"
import * as Wire from "./httpWire.ts"
import * as Sniff from "./jsonRpcSniff.ts"
import * as Redirects from "./redirects.ts"
import * as NetCause from "@effect-mcp/engine/NetCause"

// The package compiles without DOM or Node typings; the global is the platform's own.
declare const TextEncoder: new () => { encode(input: string): Uint8Array }
declare const TextDecoder: new () => { decode(input: Uint8Array): string }
const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()

const ACCEPT_BOTH = `${Wire.CONTENT_JSON}, ${Wire.CONTENT_SSE}`

// A body this small fits the socket's send buffer: it is written in full when the request is dispatched.
const SMALL_BODY_BYTES = 64 * 1024

// What a server of 2024-11-05 answers a POST to its event-stream URL with.
const fallbackStatuses = new Set([400, 404, 405])

/**
 * Executes a POST. Without a tracer installed no one can see the client's
 * span of it, nor the trace its `traceparent`/`b3` headers would name: the
 * POST goes without them, which spares a span and two headers to write and
 * parse per message, and as a bare request (see `BareRequests`). Traced, the
 * HTTP client's span is a child of the MCP request's span (the POST runs
 * under it), its `traceparent` header names it, and the trace's `tracestate`
 * goes along, as the W3C Trace Context headers the MCP conventions expect on
 * the transport.
 */
const execute = (
  http: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  Effect.withFiber((fiber) => {
    if (fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer) {
      // Untraced, read to its end, bound to no scope: none of `HttpClient.make`'s extras are needed.
      return Effect.provide(http.execute(request), bare)
    }
    const tracestate = Tracing.tracestateOf(Context.getOrUndefined(fiber.context, Tracer.ParentSpan))
    return http.execute(
      tracestate === undefined ? request : HttpClientRequest.setHeader(request, Tracing.TRACESTATE, tracestate)
    )
  })

// An untraced POST: no propagation, a bare request (one merge into the fiber's context).
const bare = Context.make(Tracer.DisablePropagation, true).pipe(Context.add(BareRequests.BareRequests, true))

const postFailed = (url: string) => (cause: HttpClientError.HttpClientError) =>
  HttpClientSse.io(`POST ${url} failed: ${NetCause.describe(cause)}`, cause)

const badReply = (what: string) =>
  new Transport.TransportError({ reason: "Protocol", message: `the server's reply ${what}` })

/** The start of a reply that is not JSON-RPC, to say what came instead: quoted, at most 60 characters. */
const excerpt = (text: string): string =>
  text.length <= 60 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 60))} (${text.length} characters)`

/**
 * A JSON reply's body, bounded as an SSE event is: one that declares more
 * than `max` bytes, or sends more without declaring its length, fails the
 * POST (its connection is dropped) instead of being held in memory. Counted
 * here rather than through `HttpIncomingMessage.MaxBodySize` (as the server
 * reads a request): only Node's responses honour that, and the client also
 * runs on the web platforms' fetch.
 */
const replyText = (
  response: HttpClientResponse.HttpClientResponse,
  max: number
): Effect.Effect<string, Transport.TransportError> => {
  const readFailed = (cause: unknown) =>
    cause instanceof Transport.TransportError
      ? cause
      : HttpClientSse.io(`reading the reply failed: ${NetCause.describe(cause)}`, cause)
  const declared = Number(response.headers["content-length"])
  if (declared <= max) return Effect.mapError(response.text, readFailed)
  const tooLarge = new Transport.TransportError({
    reason: "FrameTooLarge",
    message: `the server's reply exceeds the limit of ${max} bytes`
  })
  // The connection is dropped rather than drained.
  if (declared > max) return Effect.andThen(Redirects.discard(response), Effect.fail(tooLarge))
  return Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > max) return Effect.fail(tooLarge)
        chunks.push(chunk)
        return Effect.void
      }),
      Effect.map(() => utf8Decoder.decode(concat(chunks, size))),
      // A web response made with no body at all has no stream: it is a blank reply.
      Effect.catchIf(isEmptyBody, () => Effect.succeed("")),
      Effect.mapError(readFailed)
    )
  })
}

const isEmptyBody = (error: unknown): boolean =>
  (error as { readonly reason?: { readonly _tag?: unknown } } | undefined)?.reason?._tag === "EmptyBodyError"

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return bytes
}

/** What a POST needs of the transport around it. */
export interface Config {
  readonly http: HttpClient.HttpClient
  readonly url: string
  readonly headers: Readonly<Record<string, string>> | undefined
  readonly session: HttpClientSession
  readonly order: PostOrder.PostOrder
  readonly sse: HttpClientSse.Config
  /** Continues over the legacy transport, sending `frame` there; undefined when fallback is off. */
  readonly fallback: ((frame: Transport.Outgoing) => Effect.Effect<void, Transport.TransportError>) | undefined
  /** The session is initialized (`notifications/initialized` was accepted): open the GET stream. */
  readonly initialized: Effect.Effect<void>
}

/**
 * The answer a request gets when its POST failed with no JSON-RPC answer: an
 * `InternalError` carrying the transport's error itself in `data.transportError`
 * (an object no server can send), so the session layer can tell it from an
 * error the server answered.
 */
export const failedAnswer = (id: JsonRpc.RequestId, error: Transport.TransportError): JsonRpc.ErrorResponse =>
  JsonRpc.failure(id, {
    ...McpError.toErrorObject(new McpError.InternalError({ message: `HTTP transport: ${error.message}` })),
    data: { transportError: error }
  })

/**
 * Posts frames in order; remembers whether the server took any POST yet:
 * until it did, an `initialize` it refuses as a 2024-11-05 server refuses a
 * POST (400, 404 or 405 with no JSON-RPC answer) falls back to the legacy
 * transport, as the specification's backward compatibility asks. A refused
 * `server/discover` probe does not: a server of a later revision may refuse a
 * method it does not know that way before any session exists, and then takes
 * the `initialize` that follows.
 */
export class Poster {
  private established = false
  private readonly config: Config

  constructor(config: Config) {
    this.config = config
  }

  /** A POST that failed without a JSON-RPC answer: its requests are answered with the reason. */
  answerFailed(pending: Set<JsonRpc.RequestId>, error: Transport.TransportError): Effect.Effect<void> {
    const session = this.config.session
    // Once the session ended its frames are over: the session layer fails what is pending.
    if (session.closed) return Effect.void
    return Effect.forEach([...pending], (id) => session.deliverLocal(failedAnswer(id, error)), { discard: true })
  }

  /**
   * POSTs a frame and reads its reply to the end; `pending` holds the ids
   * still owed a response. The POST starts once the slot's `before`
   * completed, and settles the slot's entry: accepted when the response
   * headers arrive, uploaded once the whole body was handed to the connection.
   */
  post(
    frame: Transport.Outgoing,
    pending: Set<JsonRpc.RequestId>,
    slot: Slot
  ): Effect.Effect<void, Transport.TransportError> {
    return Effect.onExit(Poster.postWith(this, frame, pending, slot), () => this.config.order.settle(slot.entry))
  }

  // One generator function for every POST: an inline `Effect.gen` would make one per call (a POST handler
  // on the server measured ~18 µs of CPU per call for three of them).
  private static readonly postWith = Effect.fnUntraced(function* (
    self: Poster,
    frame: Transport.Outgoing,
    pending: Set<JsonRpc.RequestId>,
    slot: Slot
  ): Effect.fn.Return<void, Transport.TransportError> {
    const { config } = self
    const { session, order } = config
    const entry = slot.entry
    yield* slot.before
    const messages = Sniff.messagesOf(frame)
    const requestIds = [...pending]
    const single = messages.length === 1 ? messages[0]! : undefined
    const version = (single === undefined ? undefined : Headers.metaVersionOf(single)) ?? session.protocolVersion
    // Built in place: spreads of optional parts cost more than the rest of the request.
    const headers: Record<string, string> = { ...config.headers }
    if (session.sessionId !== undefined) headers[Wire.HEADER_SESSION_ID] = session.sessionId
    if (version !== undefined) headers[Wire.HEADER_PROTOCOL_VERSION] = version
    if (single !== undefined && Headers.isStatelessVersion(version)) {
      Object.assign(headers, Headers.statelessHeaders(single), session.toolParams.headersFor(single))
    }
    headers.accept = ACCEPT_BOTH
    const mayFallBack = !self.established && messages.some((m) => JsonRpc.isRequest(m) && m.method === "initialize")
    const hadSession = session.sessionId !== undefined
    const bytes = utf8.encode(JsonRpcCodec.encode(frame))
    let body = HttpClientRequest.bodyUint8Array(bytes, Wire.CONTENT_JSON)
    const uploaded = entry.uploaded
    if (uploaded !== undefined) {
      entry.bytes = bytes.length
      if (bytes.length <= SMALL_BODY_BYTES) {
        // The connection takes the whole body at once when the request is dispatched, which
        // happens before anyone woken by this runs: a stream only to learn that costs a
        // Readable and a fiber per request.
        Deferred.doneUnsafe(uploaded, Exit.void)
      } else {
        body = HttpClientRequest.bodyStream(
          Stream.make(bytes).pipe(Stream.ensuring(Deferred.succeed(uploaded, undefined))),
          { contentType: Wire.CONTENT_JSON, contentLength: bytes.length }
        )
      }
    }
    const request = HttpClientRequest.post(config.url).pipe(HttpClientRequest.setHeaders(headers), body)
    let response = yield* execute(config.http, request).pipe(Effect.mapError(postFailed(config.url)))
    if (Redirects.isRedirect(response.status)) {
      response = yield* Redirects.follow((next) => execute(config.http, next), request, response).pipe(
        Effect.mapError(postFailed(config.url))
      )
      if (Redirects.isRedirect(response.status)) {
        yield* Redirects.discard(response)
        return yield* Effect.fail(
          new Transport.TransportError({
            reason: "Protocol",
            message: `the server redirected the POST: ${Redirects.describe(request, response)}`
          })
        )
      }
    }
    order.accept(entry)
    // The getter builds the headers anew on every read.
    const responseHeaders = response.headers
    const assigned = responseHeaders[Wire.HEADER_SESSION_ID]
    if (assigned !== undefined) session.sessionId = assigned
    if (response.status === 404 && hadSession) {
      yield* Effect.ignore(response.text)
      return yield* Effect.fail(session.expire(requestIds, failedAnswer))
    }
    if (response.status >= 400) return yield* self.refused(response, frame, requestIds, mayFallBack)
    self.established = true
    if (requestIds.length === 0 || response.status === 202) {
      yield* Effect.ignore(response.text)
      if (messages.some((m) => JsonRpc.isNotification(m) && m.method === "notifications/initialized")) {
        yield* config.initialized
      }
      return
    }
    const contentType = responseHeaders["content-type"]
    if (HttpClientSse.isSseContent(contentType)) return yield* HttpClientSse.run(config.sse, response, pending)
    const reply = yield* replyText(response, config.sse.maxEventBytes)
    // A server that sent its headers before the result leaves the body blank when the request was cancelled
    // (the cancel took the request out of `pending`).
    const answered = reply.trim() === "" ? [] : yield* session.deliverReply(reply)
    if (answered === undefined) {
      return yield* Effect.fail(
        badReply(`is not JSON-RPC (HTTP ${response.status}, ${contentType ?? "no content type"}): ${excerpt(reply)}`)
      )
    }
    for (const id of answered) pending.delete(id)
    // A JSON reply is all the server says to these requests: one it left out would otherwise wait for its deadline.
    if (pending.size > 0) {
      const ids = [...pending].map((id) => JSON.stringify(id)).join(", ")
      return yield* Effect.fail(badReply(`(HTTP ${response.status}) has no response to request ${ids}`))
    }
  })

  /** A refusal: JSON-RPC errors answer the frame's requests; anything else is a transport failure. */
  private refused(
    response: HttpClientResponse.HttpClientResponse,
    frame: Transport.Outgoing,
    requestIds: ReadonlyArray<JsonRpc.RequestId>,
    mayFallBack: boolean
  ): Effect.Effect<void, Transport.TransportError> {
    const { session, fallback } = this.config
    const max = this.config.sse.maxEventBytes
    const self = this
    return Effect.gen(function* () {
      const text = yield* Effect.orElseSucceed(replyText(response, max), () => "")
      const decoded = JsonRpcCodec.decode(text)
      const replies = (Result.isSuccess(decoded) ? Sniff.messagesOf(decoded.success) : []).filter(JsonRpc.isResponse)
      const general = replies.find((r): r is JsonRpc.ErrorResponse => r.id === null && JsonRpc.isFailure(r))
      if (requestIds.length > 0 && replies.length > 0) {
        const answers: Array<JsonRpc.Message> = []
        for (const id of requestIds) {
          const own = replies.find((r) => r.id === id)
          if (own !== undefined) answers.push(own)
          else if (general !== undefined) answers.push(JsonRpc.failure(id, general.error))
        }
        if (answers.length === requestIds.length) {
          // One frame per answer: a batch frame would be refused on revisions without batches.
          yield* Effect.forEach(answers, (answer) => session.deliver(JsonRpcCodec.encode(answer)), { discard: true })
          return
        }
      }
      const status = response.status
      if (mayFallBack && fallback !== undefined && fallbackStatuses.has(status) && replies.length === 0) {
        // Both refusals are said: a URL that is no MCP endpoint at all fails both ways, and the GET's alone
        // would hide that the POST was refused first.
        const url = self.config.url
        return yield* Effect.mapError(
          fallback(frame),
          (error) =>
            new Transport.TransportError({
              reason: error.reason,
              message: `POST ${url} was refused (HTTP ${status}), and so was the legacy HTTP+SSE transport: ${error.message}`,
              cause: error
            })
        )
      }
      // The server's own words: its JSON-RPC error, else the start of what it sent (a proxy's "Bad Gateway").
      const body = text.trim()
      const detail =
        general !== undefined
          ? `: ${general.error.message}`
          : replies.length === 0 && body !== ""
            ? `: ${excerpt(body)}`
            : ""
      return yield* Effect.fail(
        new Transport.TransportError({
          reason: "Protocol",
          message: `the server refused the message (HTTP ${status})${detail}`
        })
      )
    })
  }
}
