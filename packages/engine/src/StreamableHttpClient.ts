/**
 * The Streamable HTTP transport, client side. Every frame is a POST
 * (`Accept: application/json, text/event-stream`) answered by 202, a JSON
 * body or an SSE stream; once the session is initialized a GET stream
 * carries the server's own messages. Streams that drop are resumed with
 * `Last-Event-ID`. The session id is kept and sent back, the negotiated
 * revision goes in `MCP-Protocol-Version`, and closing the scope ends the
 * session with DELETE.
 *
 * Frames reach the server in the order they were sent, though each POST may
 * travel on its own connection: a POST starts once the server accepted the
 * POSTs before it (their replies started). A request waits only for the
 * previous body's upload when nothing but requests is unaccepted ahead of it,
 * so concurrent calls are not serialized.
 *
 * A server that answers the first POST with a 4xx that is not JSON-RPC is
 * taken for a 2024-11-05 HTTP+SSE server: the transport opens the event
 * stream at the same URL and continues over the legacy transport.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as HttpClientSse from "./internal/httpClientSse.ts"
import * as Headers from "./internal/httpHeaders.ts"
import * as Wire from "./internal/httpWire.ts"
import * as Legacy from "./internal/sseLegacyClient.ts"
import * as ToolParamHeaders from "./internal/toolParamHeaders.ts"
import * as Transport from "./Transport.ts"

/** How the client reconnects a dropped SSE stream (with `Last-Event-ID`). */
export interface ReconnectOptions {
  /** Delay before the first reconnection when the server sent no `retry`. Default 1 second. */
  readonly initialDelay?: Duration.Input | undefined
  /** Upper bound of the delay. Default 30 seconds. */
  readonly maxDelay?: Duration.Input | undefined
  /** Growth of the delay after each failed attempt. Default 1.5. */
  readonly factor?: number | undefined
  /** Consecutive failed attempts before a stream is given up. Default 2. */
  readonly maxRetries?: number | undefined
}

/** Settings of the Streamable HTTP client transport. */
export interface Options {
  readonly url: string
  /** Sent with every request (e.g. `authorization`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly reconnect?: ReconnectOptions | undefined
  /** Open the GET stream after initialization. Default true. */
  readonly standaloneStream?: boolean | undefined
  /** Fall back to the 2024-11-05 HTTP+SSE transport. Default true. */
  readonly legacySseFallback?: boolean | undefined
  /** Send DELETE when the scope closes. Default true. */
  readonly terminateOnClose?: boolean | undefined
  /** Frames buffered before the reader waits for the session. Default 1,024. */
  readonly capacity?: number | undefined
  /** Largest SSE event accepted (characters); a larger one fails `incoming` with `FrameTooLarge`. Default 64 MiB. */
  readonly maxEventBytes?: number | undefined
  /**
   * How long, after a request's body was uploaded, a later message that is not
   * a request waits for the server to start the request's reply (which tells
   * that the request was taken, so the message cannot overtake it) before it
   * goes anyway, plus 100 millis per MiB of the request's body. Only servers
   * that hold a reply's headers back until its result make it wait that
   * long. Default 1 second.
   */
  readonly acceptTimeout?: Duration.Input | undefined
}

/** The server no longer knows the session (HTTP 404): start a new session. */
export class SessionExpired extends Schema.TaggedError<SessionExpired>()("SessionExpired", {
  sessionId: Schema.String
}) {
  override get message(): string {
    return `the server ended session ${this.sessionId} (HTTP 404); initialize a new session`
  }
}

/** Whether a transport error means the session expired on the server. */
export const isSessionExpired = (error: Transport.TransportError): boolean => error.cause instanceof SessionExpired

/** The Streamable HTTP client transport: a Transport plus the session it holds. */
export interface StreamableHttpClientShape extends Transport.TransportShape {
  /** The `Mcp-Session-Id` the server assigned, if any. */
  readonly sessionId: () => string | undefined
  /** The revision sent in `MCP-Protocol-Version`, if known. */
  readonly protocolVersion: () => string | undefined
  /**
   * Sets the revision sent in `MCP-Protocol-Version`. The transport learns it
   * from the `initialize` response by itself; a session layer may set it too.
   */
  readonly setProtocolVersion: (version: string | undefined) => void
  /** `"sse"` after falling back to the legacy transport. */
  readonly mode: () => "streamable" | "sse"
  /** Completes when the server answers 404 for the session. */
  readonly expired: Effect.Effect<SessionExpired>
  /** Ends the session now (DELETE), as closing the scope would. */
  readonly terminate: Effect.Effect<void>
}

/** The Streamable HTTP view of the current transport. */
export class StreamableHttpClient extends Context.Service<StreamableHttpClient, StreamableHttpClientShape>()(
  "@effect-mcp/engine/StreamableHttpClient"
) {}

const io = (message: string, cause?: unknown) =>
  new Transport.TransportError({ reason: "Io", message, ...(cause === undefined ? {} : { cause }) })

// The package compiles without DOM or Node typings; the global is the platform's own.
declare const TextEncoder: new () => { encode(input: string): Uint8Array }
const utf8 = new TextEncoder()

const closedError = new Transport.TransportError({ reason: "Closed", message: "HTTP transport closed" })

const ACCEPT_BOTH = `${Wire.CONTENT_JSON}, ${Wire.CONTENT_SSE}`

const MiB = 1024 * 1024

// A body this small fits the socket's send buffer: it is written in full when the request is dispatched.
const SMALL_BODY_BYTES = 64 * 1024

// What a server of 2024-11-05 answers a POST to its event-stream URL with.
const fallbackStatuses = new Set([400, 404, 405])

// The handshake is sent and answered before anything else, so it may block `send`.
const handshakeMethods = new Set(["initialize", "server/discover"])

const cancelledIdsOf = (messages: ReadonlyArray<JsonRpc.Message>): Array<JsonRpc.RequestId> => {
  const ids: Array<JsonRpc.RequestId> = []
  for (const message of messages) {
    if (!JsonRpc.isNotification(message) || message.method !== "notifications/cancelled") continue
    const id = (message.params as { readonly requestId?: unknown } | undefined)?.requestId
    if (typeof id === "string" || typeof id === "number") ids.push(id)
  }
  return ids
}

/**
 * Without a tracer installed no one can see the client's span of a POST, nor
 * the trace its `traceparent`/`b3` headers would name: the POST goes without
 * them, which spares a span and two headers to write and parse per message.
 */
const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer
      ? Effect.provideService(effect, Tracer.DisablePropagation, true)
      : effect
  )

/** A POST the server has not accepted yet. */
interface Unaccepted {
  /** Completes when the server took the frame: its reply started. */
  readonly accepted: Deferred.Deferred<void>
  /** A request's POST: completes once its whole body was handed to the connection. */
  readonly uploaded: Deferred.Deferred<void> | undefined
  /** A request of the stateless revision: there is no session order to keep after it. */
  readonly stateless: boolean
  /** Length of the body, once encoded. */
  bytes: number
}

interface InFlight {
  /** The ids the POST's reader still waits for (shared with it). */
  readonly pending: Set<JsonRpc.RequestId>
  /** Sent in a stateless revision: only dropping the connection cancels it. */
  readonly stateless: boolean
  fiber: Fiber.Fiber<void> | undefined
}

const millis = (input: Duration.Input | undefined, fallback: number) =>
  input === undefined ? fallback : Duration.toMillis(Duration.fromInputUnsafe(input))

const messagesIn = (decoded: JsonRpcCodec.Decoded): ReadonlyArray<JsonRpc.Message> =>
  (JsonRpcCodec.isBatch(decoded) ? decoded : [decoded]).filter(
    (m): m is JsonRpc.Message => !JsonRpcCodec.isDecodeFailure(m)
  )

/** Makes the Streamable HTTP client transport over the `HttpClient` in context. */
export const make = Effect.fnUntraced(function* (options: Options) {
  const http = yield* HttpClient.HttpClient
  const scope = yield* Scope.Scope
  const incoming = yield* Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(
    options.capacity ?? 1024
  )
  const readers = yield* FiberSet.make<void, never>()
  const expiredSignal = yield* Deferred.make<SessionExpired>()
  const reconnect: HttpClientSse.Reconnect = {
    initialMs: millis(options.reconnect?.initialDelay, 1000),
    maxMs: millis(options.reconnect?.maxDelay, 30_000),
    factor: options.reconnect?.factor ?? 1.5,
    maxRetries: options.reconnect?.maxRetries ?? 2
  }
  let sessionId: string | undefined
  let protocolVersion: string | undefined
  let legacy: Legacy.Connection | undefined
  let closed = false
  // Why sends fail once closed, when it is more than the scope closing (an expired session).
  let closedWith: Transport.TransportError | undefined
  // POSTs the server has not accepted yet, in send order, and the upload of the last one.
  const unaccepted = new Set<Unaccepted>()
  let lastUpload: Effect.Effect<void> = Effect.void
  const acceptTimeoutMs = millis(options.acceptTimeout, 1000)
  const maxEventBytes = options.maxEventBytes ?? HttpClientSse.defaultMaxEventBytes
  let attempted = false
  let standaloneStarted = false
  const initializeIds = new Set<JsonRpc.RequestId>()
  // The `x-mcp-header` declarations of the tools listed through this transport (SEP-2243).
  const toolParams = ToolParamHeaders.make()

  const learn = (messages: ReadonlyArray<JsonRpc.Message>) => {
    if (initializeIds.size === 0) return
    for (const message of messages) {
      if (!JsonRpc.isSuccess(message) || !initializeIds.has(message.id)) continue
      initializeIds.delete(message.id)
      const version = (message.result as { readonly protocolVersion?: unknown } | null)?.protocolVersion
      if (typeof version === "string") protocolVersion = version
    }
  }

  /** Hands a received frame to the session; returns the ids of the responses it held. */
  const deliver = (text: string) =>
    Effect.suspend(() => {
      const decoded = JsonRpcCodec.decode(text)
      const messages = Result.isSuccess(decoded) ? messagesIn(decoded.success) : []
      learn(messages)
      toolParams.learn(messages)
      return Effect.as(Queue.offer(incoming, decoded), Wire.responseIdsOf(messages))
    })

  const baseHeaders = (): Record<string, string> => ({
    ...options.headers,
    ...(sessionId === undefined ? {} : { [Wire.HEADER_SESSION_ID]: sessionId }),
    ...(protocolVersion === undefined ? {} : { [Wire.HEADER_PROTOCOL_VERSION]: protocolVersion })
  })

  const expire = Effect.suspend(() => {
    const error = new SessionExpired({ sessionId: sessionId ?? "" })
    sessionId = undefined
    Deferred.doneUnsafe(expiredSignal, Exit.succeed(error))
    const failure = new Transport.TransportError({ reason: "Closed", message: error.message, cause: error })
    // Without a session every later POST would be refused: sends fail with the reason instead.
    closed = true
    closedWith = failure
    return Effect.as(Queue.fail(incoming, failure), failure)
  })

  const sseConfig: HttpClientSse.Config = {
    reconnect,
    deliver: (event) => (event.event === "message" ? deliver(event.data) : Effect.succeed([])),
    get: (lastEventId) =>
      http.execute(
        HttpClientRequest.get(options.url).pipe(
          HttpClientRequest.setHeaders({
            ...baseHeaders(),
            accept: Wire.CONTENT_SSE,
            ...(lastEventId === undefined ? {} : { [Wire.HEADER_LAST_EVENT_ID]: lastEventId })
          })
        )
      ),
    // A 404 without a session means there is no GET stream, not that a session ended.
    expired: Effect.suspend(() => (sessionId === undefined ? Effect.void : Effect.asVoid(expire))),
    isClosed: () => closed,
    maxEventBytes,
    failed: (error) =>
      Effect.suspend(() => {
        closed = true
        return Effect.asVoid(Queue.fail(incoming, error))
      })
  }

  const startStandalone = Effect.suspend(() => {
    if (standaloneStarted || options.standaloneStream === false || Headers.isStatelessVersion(protocolVersion)) {
      return Effect.void
    }
    standaloneStarted = true
    return Effect.asVoid(FiberSet.run(readers, HttpClientSse.run(sseConfig, undefined, undefined)))
  })

  const fallback = (frame: Transport.Outgoing) =>
    Effect.gen(function* () {
      const connection = yield* Legacy.connect({
        http,
        url: options.url,
        headers: () => ({ ...options.headers }),
        deliver: (data) => Effect.asVoid(deliver(data)),
        maxEventBytes,
        onEnd: (error) =>
          Effect.suspend(() => {
            closed = true
            return Effect.asVoid(error === undefined ? Queue.end(incoming) : Queue.fail(incoming, error))
          })
      }).pipe(Scope.provide(scope))
      legacy = connection
      yield* connection.post(frame)
    })

  /** A refusal: JSON-RPC errors answer the frame's requests; anything else is a transport failure. */
  const refused = (
    response: HttpClientResponse.HttpClientResponse,
    frame: Transport.Outgoing,
    requestIds: ReadonlyArray<JsonRpc.RequestId>,
    first: boolean
  ) =>
    Effect.gen(function* () {
      const text = yield* Effect.orElseSucceed(response.text, () => "")
      const decoded = JsonRpcCodec.decode(text)
      const replies = (Result.isSuccess(decoded) ? messagesIn(decoded.success) : []).filter(JsonRpc.isResponse)
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
          yield* Effect.forEach(answers, (answer) => deliver(JsonRpcCodec.encode(answer)), { discard: true })
          return
        }
      }
      const status = response.status
      if (first && options.legacySseFallback !== false && fallbackStatuses.has(status) && replies.length === 0) {
        return yield* fallback(frame)
      }
      const detail = general === undefined ? "" : `: ${general.error.message}`
      return yield* Effect.fail(
        new Transport.TransportError({
          reason: "Protocol",
          message: `the server refused the message (HTTP ${status})${detail}`
        })
      )
    })

  /**
   * POSTs a frame and reads its reply to the end; `pending` holds the ids
   * still owed a response. The POST starts once `before` completed, and
   * settles `entry`: accepted when the response headers arrive, uploaded once
   * the whole body was handed to the connection.
   */
  const post = (
    frame: Transport.Outgoing,
    pending: Set<JsonRpc.RequestId>,
    before: Effect.Effect<void>,
    entry: Unaccepted
  ) =>
    Effect.gen(function* () {
      yield* before
      const messages = Wire.messagesOf(frame)
      const requestIds = [...pending]
      const single = messages.length === 1 ? messages[0]! : undefined
      const version = (single === undefined ? undefined : Headers.metaVersionOf(single)) ?? protocolVersion
      // Built in place: spreads of optional parts cost more than the rest of the request.
      const headers: Record<string, string> = { ...options.headers }
      if (sessionId !== undefined) headers[Wire.HEADER_SESSION_ID] = sessionId
      if (version !== undefined) headers[Wire.HEADER_PROTOCOL_VERSION] = version
      if (single !== undefined && Headers.isStatelessVersion(version)) {
        Object.assign(headers, Headers.statelessHeaders(single), toolParams.headersFor(single))
      }
      headers.accept = ACCEPT_BOTH
      const first = !attempted
      attempted = true
      const hadSession = sessionId !== undefined
      const text = JsonRpcCodec.encode(frame)
      const bytes = utf8.encode(text)
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
      const response = yield* untraced(
        http.execute(HttpClientRequest.post(options.url).pipe(HttpClientRequest.setHeaders(headers), body))
      ).pipe(Effect.mapError((cause) => io(`POST ${options.url} failed: ${cause.message}`, cause)))
      acceptNow(entry)
      // The getter builds the headers anew on every read.
      const responseHeaders = response.headers
      const assigned = responseHeaders[Wire.HEADER_SESSION_ID]
      if (assigned !== undefined) sessionId = assigned
      if (response.status === 404 && hadSession) {
        yield* Effect.ignore(response.text)
        return yield* Effect.flip(expire)
      }
      if (response.status >= 400) return yield* refused(response, frame, requestIds, first)
      if (requestIds.length === 0 || response.status === 202) {
        yield* Effect.ignore(response.text)
        if (messages.some((m) => JsonRpc.isNotification(m) && m.method === "notifications/initialized")) {
          yield* startStandalone
        }
        return
      }
      if (HttpClientSse.isSseContent(responseHeaders["content-type"]))
        return yield* HttpClientSse.run(sseConfig, response, pending)
      const reply = yield* response.text.pipe(Effect.mapError((cause) => io("reading the reply failed", cause)))
      // A server that sent its headers before the result leaves the body blank when the request was cancelled.
      if (reply.trim() !== "") yield* deliver(reply)
    }).pipe(
      Effect.onExit(() =>
        Effect.andThen(
          markAccepted(entry),
          entry.uploaded === undefined ? Effect.void : Deferred.succeed(entry.uploaded, undefined)
        )
      )
    )

  const acceptNow = (entry: Unaccepted) => {
    unaccepted.delete(entry)
    Deferred.doneUnsafe(entry.accepted, Exit.void)
  }

  const markAccepted = (entry: Unaccepted) => Effect.sync(() => acceptNow(entry))

  /**
   * When a later message may go: once the server accepted the POST. A
   * server that holds a reply's headers back until the result gets
   * `acceptTimeout` after the upload (more for a large body, which takes
   * longer to receive and parse), so that the next message (maybe the answer
   * its handler waits for) is not held back until then.
   */
  const acceptanceOf = (entry: Unaccepted): Effect.Effect<void> => {
    if (entry.uploaded === undefined) return Deferred.await(entry.accepted)
    if (entry.stateless) return Deferred.await(entry.uploaded)
    return Effect.raceFirst(
      Deferred.await(entry.accepted),
      Effect.andThen(
        Deferred.await(entry.uploaded),
        Effect.suspend(() => Effect.sleep(Duration.millis(acceptTimeoutMs + Math.floor((entry.bytes * 100) / MiB))))
      )
    )
  }

  const inflight = new Map<JsonRpc.RequestId, InFlight>()

  /** A POST that failed without a JSON-RPC answer: its requests are answered with the reason. */
  const answerFailed = (pending: Set<JsonRpc.RequestId>, error: Transport.TransportError) =>
    Effect.forEach(
      [...pending],
      (id) =>
        deliver(
          JsonRpcCodec.encode(
            JsonRpc.failure(
              id,
              McpError.toErrorObject(
                new McpError.InternalError({
                  message: `HTTP transport: ${error.message}`,
                  data: { transportError: error.reason }
                })
              )
            )
          )
        ),
      { discard: true }
    )

  const send = (frame: Transport.Outgoing): Effect.Effect<void, Transport.TransportError> =>
    Effect.suspend(() => {
      if (closed) return Effect.fail(closedWith ?? closedError)
      if (legacy !== undefined) return legacy.post(frame)
      const messages = Wire.messagesOf(frame)
      let cancelsOnlyStateless = messages.length > 0
      for (const id of cancelledIdsOf(messages)) {
        const entry = inflight.get(id)
        inflight.delete(id)
        entry?.pending.delete(id)
        if (entry?.stateless === true && entry.fiber !== undefined) entry.fiber.interruptUnsafe()
        else cancelsOnlyStateless = false
      }
      // On the stateless revision a cancel has no session to go to: dropping the connection was the cancel.
      if (cancelsOnlyStateless && messages.every((m) => cancelledIdsOf([m]).length > 0)) return Effect.void
      const requests = messages.filter(JsonRpc.isRequest)
      for (const request of requests) if (request.method === "initialize") initializeIds.add(request.id)
      toolParams.watch(requests)
      const pending = new Set(requests.map((r) => r.id))
      // Every frame reaches the server after the frames sent before it: its POST starts once the
      // server accepted theirs (a cancel never overtakes its request). Only a request may go as
      // soon as the previous body is uploaded, when nothing but requests is still unaccepted
      // ahead of it: the server runs requests concurrently, so no order among them is observable,
      // and a request waiting for the previous one's reply to start would serialize every call.
      const isRequest = requests.length > 0 && !requests.some((r) => handshakeMethods.has(r.method))
      const ahead: Array<Effect.Effect<void>> = []
      for (const entry of unaccepted) if (!isRequest || entry.uploaded === undefined) ahead.push(acceptanceOf(entry))
      if (isRequest) ahead.push(lastUpload)
      // Side by side: each unaccepted request's `acceptTimeout` runs from its own upload.
      const before =
        ahead.length === 0
          ? Effect.void
          : ahead.length === 1
            ? ahead[0]!
            : Effect.all(ahead, { concurrency: "unbounded", discard: true })
      const stateless = isRequest && requests.some((r) => Headers.isStatelessVersion(Headers.metaVersionOf(r)))
      const unacceptedEntry: Unaccepted = {
        accepted: Deferred.makeUnsafe<void>(),
        uploaded: isRequest ? Deferred.makeUnsafe<void>() : undefined,
        stateless,
        bytes: 0
      }
      unaccepted.add(unacceptedEntry)
      const upload = Deferred.await(unacceptedEntry.uploaded ?? unacceptedEntry.accepted)
      lastUpload = upload
      if (!isRequest) return post(frame, pending, before, unacceptedEntry)
      // Requests run in the background: a reply's headers may come only with the result (JSON
      // replies, stateless revisions), and the Peer's timeouts and cancellation must not wait for
      // it. `send` returns once the body is uploaded.
      const entry: InFlight = { pending, stateless, fiber: undefined }
      for (const id of pending) inflight.set(id, entry)
      const forget = Effect.sync(() => {
        for (const request of requests) if (inflight.get(request.id) === entry) inflight.delete(request.id)
      })
      return FiberSet.run(
        readers,
        post(frame, pending, before, unacceptedEntry).pipe(
          Effect.catch((error) => answerFailed(pending, error)),
          Effect.ensuring(forget)
        )
      ).pipe(
        Effect.flatMap((fiber) =>
          Effect.sync(() => {
            entry.fiber = fiber
          })
        ),
        Effect.andThen(upload)
      )
    })

  const terminate = Effect.suspend(() => {
    const id = sessionId
    if (id === undefined || legacy !== undefined) return Effect.void
    sessionId = undefined
    return http
      .execute(
        HttpClientRequest.delete(options.url).pipe(
          HttpClientRequest.setHeaders({ ...baseHeaders(), [Wire.HEADER_SESSION_ID]: id })
        )
      )
      .pipe(
        Effect.flatMap((response) => response.text),
        Effect.timeoutOption(Duration.seconds(5)),
        Effect.ignore
      )
  })

  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      closed = true
      yield* FiberSet.clear(readers)
      if (options.terminateOnClose !== false) yield* terminate
      yield* Queue.end(incoming)
    })
  )

  return {
    incoming: Stream.fromQueue(incoming),
    /** Sends a frame: a POST (or a message of the legacy transport). */
    send,
    /** The session id the server assigned. */
    sessionId: () => sessionId,
    /** The revision sent in `MCP-Protocol-Version`. */
    protocolVersion: () => protocolVersion,
    /** Sets the revision sent in `MCP-Protocol-Version`. */
    setProtocolVersion: (version) => {
      protocolVersion = version
    },
    /** Which transport is in use. */
    mode: () => (legacy === undefined ? "streamable" : "sse"),
    expired: Deferred.await(expiredSignal),
    terminate
  } satisfies StreamableHttpClientShape
})

/** Provides `Transport` (and the HTTP-specific view of it) over the `HttpClient`. */
export const layer = (
  options: Options
): Layer.Layer<Transport.Transport | StreamableHttpClient, never, HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.map(make(options), (client) =>
      Context.make(StreamableHttpClient, client).pipe(Context.add(Transport.Transport, client))
    )
  )
