/**
 * The Streamable HTTP transport, client side. Every frame is a POST
 * (`Accept: application/json, text/event-stream`) answered by 202, a JSON
 * body or an SSE stream; once the session is initialized a GET stream
 * carries the server's own messages. Streams that drop are resumed with
 * `Last-Event-ID`. The session id is kept and sent back, the negotiated
 * revision goes in `MCP-Protocol-Version`, and closing the scope ends the
 * session with DELETE. A 404 for the session expires it; `renew` starts over.
 *
 * A request whose POST failed with no JSON-RPC answer (the server is
 * unreachable, or it answered 404 for an expired session) is answered here
 * with an `InternalError` carrying the transport's error in
 * `data.transportError`; McpClient turns it back into that `TransportError`.
 *
 * Frames reach the server in the order they were sent, though each POST may
 * travel on its own connection (the rule is internal/httpClientOrder.ts).
 *
 * A server that answers the first POST with a 4xx that is not JSON-RPC is
 * taken for a 2024-11-05 HTTP+SSE server: the transport opens the event
 * stream at the same URL and continues over the legacy transport. A
 * `server/discover` probe (2026-07-28) is not sent there: it fails, and the
 * session opens the legacy server with `initialize` (`carriesStateless`).
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { PostOrder } from "./internal/httpClientOrder.ts"
import { failedAnswer, Poster } from "./internal/httpClientPost.ts"
import { closedError, HttpClientSession, SessionExpired } from "./internal/httpClientSession.ts"
import * as HttpClientSse from "./internal/httpClientSse.ts"
import * as Headers from "./internal/httpHeaders.ts"
import * as Wire from "./internal/httpWire.ts"
import * as Sniff from "./internal/jsonRpcSniff.ts"
import * as Redirects from "./internal/redirects.ts"
import * as Legacy from "./internal/sseLegacyClient.ts"
import * as Transport from "@effect-mcp/engine/Transport"

export { SessionExpired }

/**
 * How the client reconnects a dropped SSE stream (with `Last-Event-ID`): it
 * waits the server's `retry` (at least 100 ms; else `initialDelay`), then retries a failed
 * attempt after that wait times `factor`, `factor`², … (never more than
 * `maxDelay`), `maxRetries` times.
 */
export interface ReconnectOptions {
  /** Delay before the first reconnection when the server sent no `retry`. Default 1 second. */
  readonly initialDelay?: Duration.Input | undefined
  /** Upper bound of the delay. Default 30 seconds. */
  readonly maxDelay?: Duration.Input | undefined
  /** Growth of the delay after each failed attempt. Default 1.5. */
  readonly factor?: number | undefined
  /** Failed attempts retried before a stream is given up (a reconnection makes 1 + maxRetries). Default 2. */
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
  /**
   * How long ending the session (`terminate`, or closing the scope) waits for
   * the server to answer its DELETE; a server that does not answer in time
   * keeps the session until it expires it. Default 5 seconds.
   */
  readonly terminateTimeout?: Duration.Input | undefined
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
  /**
   * After the session expired: readies the transport for a new session
   * (`incoming` reads the new session's frames, the next POST goes without a
   * session id, as a new `initialize` must). Does nothing otherwise.
   */
  readonly renew: Effect.Effect<void>
}

/** The Streamable HTTP view of the current transport. */
export class StreamableHttpClient extends Context.Service<StreamableHttpClient, StreamableHttpClientShape>()(
  "@effect-mcp/http/StreamableHttpClient"
) {}

const millis = (input: Duration.Input | undefined, fallback: number) =>
  input === undefined ? fallback : Duration.toMillis(Duration.fromInputUnsafe(input))

// The handshake is sent and answered before anything else, so it may block `send`.
const handshakeMethods = new Set(["initialize", "server/discover"])

/** A stateless request met a server that fell back to legacy HTTP+SSE: it is not sent there. */
const legacyOnly = new Transport.TransportError({
  reason: "Protocol",
  message: "the server speaks only the legacy HTTP+SSE transport, which carries no 2026-07-28 request"
})

/** True when the frame holds a request of a stateless revision (its `_meta` names one). */
const hasStatelessRequest = (frame: Transport.Outgoing): boolean =>
  Sniff.messagesOf(frame).some((m) => JsonRpc.isRequest(m) && Headers.isStatelessVersion(Headers.metaVersionOf(m)))

interface InFlight {
  /** The ids the POST's reader still waits for (shared with it). */
  readonly pending: Set<JsonRpc.RequestId>
  /** Sent in a stateless revision: only dropping the connection cancels it. */
  readonly stateless: boolean
  /** Reads the POST's reply; interrupted once every request in it was cancelled. */
  fiber: Fiber.Fiber<void> | undefined
}

/** Makes the Streamable HTTP client transport over the `HttpClient` in context. */
export const make = Effect.fnUntraced(function* (options: Options) {
  const http = yield* HttpClient.HttpClient
  const scope = yield* Scope.Scope
  const capacity = options.capacity ?? 1024
  const session = new HttpClientSession(
    yield* Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(capacity),
    capacity,
    options.headers
  )
  // The readers of POST replies and of the GET stream: a renewed session starts without them.
  const readers = yield* FiberSet.make<void, never>()
  const order = new PostOrder(millis(options.acceptTimeout, 1000))
  const maxEventBytes = options.maxEventBytes ?? HttpClientSse.defaultMaxEventBytes
  let legacy: Legacy.Connection | undefined
  let standaloneStarted = false
  // Requests whose POST is still being read, by id: a cancel finds its request's reader here.
  const inflight = new Map<JsonRpc.RequestId, InFlight>()

  /** A GET or DELETE, following the redirects a POST follows (see `internal/redirects.ts`). */
  const executeFollowing = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.flatMap(http.execute(request), (response) => Redirects.follow(http.execute, request, response))

  const sseConfig: HttpClientSse.Config = {
    reconnect: {
      initialDelay: Duration.fromInputUnsafe(options.reconnect?.initialDelay ?? "1 second"),
      maxDelay: Duration.fromInputUnsafe(options.reconnect?.maxDelay ?? "30 seconds"),
      factor: options.reconnect?.factor ?? 1.5,
      maxRetries: options.reconnect?.maxRetries ?? 2
    },
    deliver: (event) => (event.event === "message" ? session.deliver(event.data) : Effect.succeed([])),
    get: (lastEventId) =>
      executeFollowing(
        HttpClientRequest.get(options.url).pipe(
          HttpClientRequest.setHeaders({
            ...session.headers(),
            accept: Wire.CONTENT_SSE,
            ...(lastEventId === undefined ? {} : { [Wire.HEADER_LAST_EVENT_ID]: lastEventId })
          })
        )
      ),
    // A 404 without a session means there is no GET stream, not that a session ended.
    expired: Effect.sync(() => {
      if (session.sessionId !== undefined) session.expire([], failedAnswer)
    }),
    isClosed: () => session.closed,
    maxEventBytes,
    failed: (error) => session.fail(error)
  }

  const startStandalone = Effect.suspend(() => {
    if (
      standaloneStarted ||
      options.standaloneStream === false ||
      Headers.isStatelessVersion(session.protocolVersion)
    ) {
      return Effect.void
    }
    standaloneStarted = true
    return Effect.asVoid(FiberSet.run(readers, HttpClientSse.runStandalone(sseConfig)))
  })

  const fallback = (frame: Transport.Outgoing) =>
    Effect.gen(function* () {
      const connection = yield* Legacy.connect({
        http,
        url: options.url,
        headers: () => ({ ...options.headers }),
        deliver: (data) => Effect.asVoid(session.deliver(data)),
        maxEventBytes,
        onEnd: (error) => (error === undefined ? session.end() : session.fail(error))
      }).pipe(Scope.provide(scope))
      legacy = connection
      // A legacy server speaks no stateless revision: a request of one (the `server/discover` probe) is not
      // sent there. Its failure, with `carriesStateless` now false, has the session open with `initialize`.
      if (hasStatelessRequest(frame)) return yield* Effect.fail(legacyOnly)
      yield* connection.post(frame)
    })

  const poster = new Poster({
    http,
    url: options.url,
    headers: options.headers,
    session,
    order,
    sse: sseConfig,
    fallback: options.legacySseFallback === false ? undefined : fallback,
    initialized: startStandalone
  })

  /**
   * Drops what cancels name; true when the frame is only cancels of stateless requests (nothing to send).
   * A POST none of whose requests is still wanted is read no further: its connection is dropped, which on
   * a stateless revision is the cancel itself, and on a stateful one frees what a server that never
   * answers would hold open for each request given up on (the cancel notice goes on its own POST).
   */
  const cancelled = (messages: ReadonlyArray<JsonRpc.Message>): boolean => {
    const ids = Sniff.cancelledIdsOf(messages)
    if (ids === undefined) return false
    let onlyStateless = ids.length === messages.length
    for (const id of ids) {
      const entry = inflight.get(id)
      inflight.delete(id)
      if (entry === undefined) {
        onlyStateless = false
        continue
      }
      entry.pending.delete(id)
      if (entry.pending.size === 0) entry.fiber?.interruptUnsafe()
      if (!entry.stateless) onlyStateless = false
    }
    return onlyStateless
  }

  const send = (frame: Transport.Outgoing): Effect.Effect<void, Transport.TransportError> =>
    Effect.suspend(() => {
      if (session.closedWith !== undefined) return Effect.fail(session.closedWith)
      if (legacy !== undefined) return legacy.post(frame)
      const messages = Sniff.messagesOf(frame)
      // On the stateless revision a cancel has no session to go to: dropping the connection was the cancel.
      if (cancelled(messages)) return Effect.void
      const requests = messages.filter(JsonRpc.isRequest)
      session.watch(requests)
      const pending = new Set(requests.map((r) => r.id))
      const isRequest = requests.length > 0 && !requests.some((r) => handshakeMethods.has(r.method))
      const stateless = isRequest && requests.some((r) => Headers.isStatelessVersion(Headers.metaVersionOf(r)))
      const slot = order.next(isRequest, stateless)
      if (!isRequest) return poster.post(frame, pending, slot)
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
        poster.post(frame, pending, slot).pipe(
          Effect.catch((error) => poster.answerFailed(pending, error)),
          Effect.ensuring(forget)
        )
      ).pipe(
        Effect.flatMap((fiber) =>
          Effect.sync(() => {
            entry.fiber = fiber
          })
        ),
        Effect.andThen(slot.upload)
      )
    })

  const terminateTimeout = Duration.fromInputUnsafe(options.terminateTimeout ?? Duration.seconds(5))
  const terminate = Effect.suspend(() => {
    const id = session.sessionId
    if (id === undefined || legacy !== undefined) return Effect.void
    const headers = session.headers()
    session.sessionId = undefined
    return executeFollowing(HttpClientRequest.delete(options.url).pipe(HttpClientRequest.setHeaders(headers))).pipe(
      Effect.flatMap((response) => response.text),
      Effect.timeoutOption(terminateTimeout),
      Effect.ignore
    )
  })

  const renew = Effect.gen(function* () {
    // The expired session's readers would hand its late frames to the new one.
    yield* FiberSet.clear(readers)
    if (!(yield* session.renew())) return
    inflight.clear()
    standaloneStarted = false
  })

  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      session.closedWith ??= closedError
      yield* FiberSet.clear(readers)
      if (options.terminateOnClose !== false) yield* terminate
      yield* Queue.end(session.queue)
    })
  )

  return {
    // Read at each run: after `renew` it is the new session's queue.
    incoming: Stream.suspend(() => Stream.fromQueue(session.queue)),
    /** Sends a frame: a POST (or a message of the legacy transport). */
    send,
    /** The session id the server assigned. */
    sessionId: () => session.sessionId,
    /** The revision sent in `MCP-Protocol-Version`. */
    protocolVersion: () => session.protocolVersion,
    /** Sets the revision sent in `MCP-Protocol-Version`. */
    setProtocolVersion: (version) => {
      session.protocolVersion = version
    },
    /** Which transport is in use. */
    mode: () => (legacy === undefined ? "streamable" : "sse"),
    /** Whether a 2026-07-28 server can be behind it: not once it fell back to legacy HTTP+SSE. */
    carriesStateless: () => legacy === undefined,
    expired: session.expired,
    terminate,
    renew
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
