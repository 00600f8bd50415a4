/**
 * One Streamable HTTP session on the server: the transport its MCP session
 * runs over, and the routing of everything that session sends to the HTTP
 * exchange it belongs to. A response (and progress or logs sent for a
 * request) goes to the stream of the POST that carried the request; anything
 * else goes to the session's GET stream. Each message goes to exactly one
 * stream.
 *
 * A stream is logical: its HTTP connection may drop and be replaced by a GET
 * carrying `Last-Event-ID`; events sent meanwhile wait in the EventStore.
 *
 * A connection buffers a bounded number of events: when its client reads
 * slowly, `send` suspends, and suspended senders are served strictly in
 * arrival order (a new sender queues behind them). A frame becomes an event
 * (stored, numbered, queued) only when it is its turn, so an interrupted
 * sender leaves nothing behind.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type * as EventStore from "../EventStore.ts"
import * as Transport from "../Transport.ts"
import { formatEvent, messagesOf, responseIdsOf } from "./httpWire.ts"

export interface Config {
  /** The `Mcp-Session-Id`; undefined for a per-request (stateless) session. */
  readonly id: string | undefined
  /** Prefix of this session's stream ids in the EventStore. */
  readonly key: string
  /** Present when the session's streams are resumable. */
  readonly store: EventStore.EventStoreShape | undefined
  /** The `retry` sent with priming events, in milliseconds. */
  readonly retryMs: number | undefined
  /** Whether a GET stream exists for messages unrelated to a request. */
  readonly standalone: boolean
  /** Events a connection buffers before `send` suspends. */
  readonly maxBuffered: number
}

export type Connection = Queue.Queue<string, Cause.Done>

/** The input of a session that reads `incoming` instead of attaching itself. */
interface Pull {
  readonly queue: Queue.Queue<Transport.Incoming, Transport.TransportError | Cause.Done>
  readonly drained: Deferred.Deferred<void>
}

/**
 * A session's transport. Its `incoming` is made only when read: a session
 * that attaches itself (push delivery) never reads it, so an idle session
 * holds neither a reader nor a queue.
 */
class SessionTransport implements Transport.TransportShape {
  readonly send: Transport.TransportShape["send"]
  readonly attach: (receiver: Transport.Receiver) => boolean
  private readonly read: () => Stream.Stream<Transport.Incoming, Transport.TransportError>

  constructor(
    send: Transport.TransportShape["send"],
    attach: (receiver: Transport.Receiver) => boolean,
    read: () => Stream.Stream<Transport.Incoming, Transport.TransportError>
  ) {
    this.send = send
    this.attach = attach
    this.read = read
  }

  get incoming(): Stream.Stream<Transport.Incoming, Transport.TransportError> {
    return this.read()
  }
}

/** A send waiting for room on its stream; `done` completes once its event is queued (or dropped). */
interface Waiter {
  readonly data: string
  readonly ids: ReadonlyArray<JsonRpc.RequestId>
  readonly head: JsonRpc.Message | undefined
  readonly done: Deferred.Deferred<void, Transport.TransportError>
}

export interface LogicalStream {
  readonly id: string
  readonly standalone: boolean
  /** Requests whose responses this stream carries; the stream completes when none is left. */
  readonly pending: Set<JsonRpc.RequestId>
  /** JSON-response mode: the responses collected for the POST reply. */
  readonly collected: Array<JsonRpc.Message> | undefined
  /** Completes when every pending response was sent (or the session closed). */
  readonly done: Deferred.Deferred<void>
  /**
   * The first message sent on this stream, or undefined when it ended without
   * one; lets a reply hold its status line back until it is known.
   */
  readonly first: Deferred.Deferred<JsonRpc.Message | undefined>
  /** Sends waiting for room on the connection, in arrival order. */
  readonly waiting: Array<Waiter>
  connection: Connection | undefined
  complete: boolean
}

export interface HttpSession {
  readonly id: string | undefined
  readonly transport: Transport.TransportShape
  /** Completes once the MCP session read every frame offered so far and the input ended. */
  readonly drained: Effect.Effect<void>
  /** The negotiated revision, learned from the `initialize` response. */
  protocolVersion: string | undefined
  lastActive: number
  /** Open HTTP exchanges (POSTs being served, attached SSE connections); idle expiry waits for zero. */
  active: number
  readonly isClosed: () => boolean
  /** Whether a request id is already being answered. */
  readonly isPending: (id: JsonRpc.RequestId) => boolean
  /** Remembers that `id` is an `initialize`, so its response teaches the negotiated revision. */
  readonly trackInitialize: (id: JsonRpc.RequestId) => void
  /** Opens the stream answering a POST's requests. */
  readonly openPost: (
    requestIds: ReadonlyArray<JsonRpc.RequestId>,
    mode: "sse" | "json",
    priming: boolean
  ) => Effect.Effect<LogicalStream>
  /** Hands a frame to the MCP session. */
  readonly offer: (frame: JsonRpcCodec.Decoded) => Effect.Effect<boolean>
  /** Ends the input: the MCP session sees end-of-stream after the frames already offered. */
  readonly endInput: Effect.Effect<void>
  /** The SSE body of a connection of a stream (by default its current one). */
  readonly body: (stream: LogicalStream, connection?: Connection | undefined) => Stream.Stream<Uint8Array>
  /**
   * The whole SSE text of a stream already complete on `connection`, which it
   * then ends and forgets (delivered in full); undefined while it is not.
   */
  readonly completeText: (stream: LogicalStream, connection: Connection) => Effect.Effect<string | undefined>
  /** Attaches a connection to the GET stream; undefined when one is attached already. */
  readonly openStandalone: (priming: boolean) => Effect.Effect<LogicalStream | undefined>
  /** Attaches a new connection to the stream of `lastEventId`, replaying what followed it. */
  readonly resume: (lastEventId: string) => Effect.Effect<LogicalStream | undefined>
  /** Ends the connection of the stream carrying `requestId`; the client resumes it. */
  readonly closeRequestStream: (requestId: JsonRpc.RequestId) => Effect.Effect<void>
  readonly closeStandaloneStream: Effect.Effect<void>
  /** Marks the session closed, ends every connection and forgets its events. */
  readonly shutdown: Effect.Effect<void>
}

const closedError = new Transport.TransportError({ reason: "Closed", message: "HTTP session closed" })

// An SSE comment: opens a reply's stream without an event (clients skip comments).
const ACCEPTED = ":\n\n"

const sessionClosedResponse = (id: JsonRpc.RequestId): JsonRpc.Message =>
  JsonRpc.failure(
    id,
    McpError.toErrorObject(new McpError.InternalError({ message: "the session closed before the request completed" }))
  )

export const make = Effect.fnUntraced(function* (config: Config) {
  const clock = yield* Clock.Clock
  const lock = Semaphore.makeUnsafe(1)
  // The MCP session attaches itself (push delivery: no reader waits while the
  // session is idle), or else reads `incoming`, whose queue is made then.
  let receiver: Transport.Receiver | undefined
  let pull: Pull | undefined
  const pulled = (): Effect.Effect<Pull> =>
    pull === undefined
      ? Effect.map(Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(256), (queue) => {
          pull ??= { queue, drained: Deferred.makeUnsafe<void>() }
          return pull
        })
      : Effect.succeed(pull)
  const byRequest = new Map<JsonRpc.RequestId, LogicalStream>()
  const streams = new Map<string, LogicalStream>()
  const initializeIds = new Set<JsonRpc.RequestId>()
  let counter = 0
  let closed = false

  const newStream = (standalone: boolean, collected: Array<JsonRpc.Message> | undefined): LogicalStream => {
    const stream: LogicalStream = {
      id: `${config.key}_${standalone ? "get" : counter++}`,
      standalone,
      pending: new Set(),
      collected,
      done: Deferred.makeUnsafe<void>(),
      first: Deferred.makeUnsafe<JsonRpc.Message | undefined>(),
      waiting: [],
      connection: undefined,
      complete: false
    }
    streams.set(stream.id, stream)
    return stream
  }
  const standaloneStream = config.standalone ? newStream(true, undefined) : undefined
  // Messages for the GET stream while no GET is open: the next GET receives them.
  const undelivered: Array<string> = []
  const maxUndelivered = 1024

  const forget = (stream: LogicalStream) => {
    streams.delete(stream.id)
    return config.store === undefined ? Effect.void : Effect.ignore(config.store.forget(stream.id), { log: "Warn" })
  }

  /** Stores (when resumable) and writes one event; callers hold the lock so event order is send order. */
  const write = (stream: LogicalStream, data: string, retryMs?: number) =>
    Effect.gen(function* () {
      let id: string | undefined
      if (config.store !== undefined) {
        id = yield* config.store
          .append(stream.id, data)
          .pipe(
            Effect.catch((error) =>
              Effect.as(Effect.logWarning(`event not stored, it cannot be resumed: ${error.message}`), undefined)
            )
          )
      }
      const text = formatEvent({ id, event: data === "" ? undefined : "message", data, retryMs })
      if (stream.connection !== undefined) {
        Queue.offerUnsafe(stream.connection, text)
      } else if (stream.standalone && data !== "") {
        undelivered.push(text)
        if (undelivered.length > maxUndelivered) undelivered.shift()
      }
    })

  /** Ends the waits of a stream's suspended senders; their frames are never sent. */
  const release = (stream: LogicalStream, exit: Exit.Exit<void, Transport.TransportError>) => {
    for (const waiter of stream.waiting.splice(0, stream.waiting.length)) Deferred.doneUnsafe(waiter.done, exit)
  }

  const finish = (stream: LogicalStream) => {
    stream.complete = true
    // A JSON reply is never resumed.
    if (stream.collected !== undefined) streams.delete(stream.id)
    if (stream.connection !== undefined) Queue.endUnsafe(stream.connection)
    // What still waits was sent for requests that are answered or cancelled: nobody reads it.
    release(stream, Exit.void)
    Deferred.doneUnsafe(stream.first, Exit.succeed(undefined))
    Deferred.doneUnsafe(stream.done, Exit.void)
  }

  const settle = (stream: LogicalStream, ids: ReadonlyArray<JsonRpc.RequestId>) => {
    for (const id of ids) {
      stream.pending.delete(id)
      if (byRequest.get(id) === stream) byRequest.delete(id)
    }
    if (stream.pending.size === 0 && !stream.standalone) finish(stream)
  }

  const learnVersion = (frame: Transport.Outgoing) => {
    if (initializeIds.size === 0) return
    for (const message of messagesOf(frame)) {
      if (!JsonRpc.isSuccess(message) || !initializeIds.has(message.id)) continue
      initializeIds.delete(message.id)
      const version = (message.result as { readonly protocolVersion?: unknown } | null)?.protocolVersion
      if (typeof version === "string") session.protocolVersion = version
    }
  }

  const route = (frame: Transport.Outgoing, related: JsonRpc.RequestId | undefined): LogicalStream | undefined => {
    const ids = responseIdsOf(frame)
    if (ids.length > 0) {
      for (const id of ids) {
        const stream = byRequest.get(id)
        if (stream !== undefined) return stream
      }
      return undefined
    }
    if (related !== undefined) {
      const stream = byRequest.get(related)
      // A JSON reply carries only responses; what a handler sends meanwhile goes to the GET stream.
      if (stream !== undefined && stream.collected === undefined) return stream
    }
    return standaloneStream
  }

  const hasRoom = (stream: LogicalStream) =>
    stream.connection === undefined || Queue.sizeUnsafe(stream.connection) < config.maxBuffered

  /** Makes a frame an event of its stream (or drops it); callers hold the lock. */
  const admit = (
    stream: LogicalStream,
    data: string,
    ids: ReadonlyArray<JsonRpc.RequestId>,
    head: JsonRpc.Message | undefined
  ) => {
    if (!stream.standalone) Deferred.doneUnsafe(stream.first, Exit.succeed(head))
    if (stream.connection === undefined && config.store === undefined && !stream.standalone) {
      settle(stream, ids)
      return Effect.logDebug("dropped a message: its stream has no connection and no event store")
    }
    return Effect.andThen(
      write(stream, data),
      Effect.sync(() => settle(stream, ids))
    )
  }

  /** Admits waiting senders, first come first served, while their stream has room. */
  const pump = (stream: LogicalStream): Effect.Effect<void> =>
    Effect.suspend(() =>
      stream.waiting.length === 0
        ? Effect.void
        : lock
            .withPermit(
              Effect.gen(function* () {
                while (!closed && stream.waiting.length > 0 && hasRoom(stream)) {
                  // Out of the list first: an interrupt arriving meanwhile finds it taken.
                  const waiter = stream.waiting.shift()!
                  yield* admit(stream, waiter.data, waiter.ids, waiter.head)
                  Deferred.doneUnsafe(waiter.done, Exit.void)
                }
              })
            )
            .pipe(Effect.uninterruptible)
    )

  /**
   * Routes and admits a frame at once when its stream has room and nobody
   * waits ahead of it; otherwise returns the waiter that holds its place.
   */
  const enqueue = (frame: Transport.Outgoing, related: JsonRpc.RequestId | undefined) =>
    Effect.suspend((): Effect.Effect<readonly [LogicalStream, Waiter] | undefined> => {
      const stream = route(frame, related)
      if (stream === undefined) {
        return Effect.as(Effect.logDebug("dropped a message with no stream to carry it"), undefined)
      }
      const ids = responseIdsOf(frame)
      const head = messagesOf(frame)[0]
      if (stream.collected !== undefined) {
        Deferred.doneUnsafe(stream.first, Exit.succeed(head))
        stream.collected.push(...messagesOf(frame))
        settle(stream, ids)
        return Effect.succeed(undefined)
      }
      const data = JsonRpcCodec.encode(frame)
      if (stream.waiting.length === 0 && hasRoom(stream)) return Effect.as(admit(stream, data, ids, head), undefined)
      const waiter: Waiter = { data, ids, head, done: Deferred.makeUnsafe() }
      stream.waiting.push(waiter)
      return Effect.succeed([stream, waiter] as const)
    })

  const send = (frame: Transport.Outgoing, options?: Transport.SendOptions) =>
    Effect.suspend((): Effect.Effect<void, Transport.TransportError> => {
      if (closed) return Effect.fail(closedError)
      learnVersion(frame)
      // Holding a place in the line and leaving it are atomic; only the wait is interruptible.
      return Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(lock.withPermit(enqueue(frame, options?.relatedRequestId)), (queued) => {
          if (queued === undefined) return Effect.void
          const [stream, waiter] = queued
          return restore(Deferred.await(waiter.done)).pipe(
            Effect.onInterrupt(() =>
              Effect.sync(() => {
                const index = stream.waiting.indexOf(waiter)
                if (index >= 0) stream.waiting.splice(index, 1)
              })
            )
          )
        })
      )
    })

  /**
   * A cancelled request is never answered: its stream stops waiting for it
   * (and ends when nothing else is pending). A late response is dropped.
   */
  const releaseCancelled = (frame: JsonRpcCodec.Decoded) => {
    const ids: Array<JsonRpc.RequestId> = []
    for (const message of JsonRpcCodec.isBatch(frame) ? frame : [frame]) {
      if (JsonRpcCodec.isDecodeFailure(message) || !JsonRpc.isNotification(message)) continue
      if (message.method !== "notifications/cancelled") continue
      const id = (message.params as { readonly requestId?: unknown } | undefined)?.requestId
      if (typeof id === "string" || typeof id === "number") ids.push(id)
    }
    if (ids.length === 0) return Effect.void
    return lock.withPermit(
      Effect.sync(() => {
        for (const id of ids) {
          const stream = byRequest.get(id)
          if (stream !== undefined && stream.collected === undefined) settle(stream, [id])
        }
      })
    )
  }

  const attach = (stream: LogicalStream): Effect.Effect<Connection> =>
    Effect.map(Queue.unbounded<string, Cause.Done>(), (connection) => {
      if (stream.connection !== undefined) Queue.endUnsafe(stream.connection)
      stream.connection = connection
      return connection
    })

  const completeText = (stream: LogicalStream, connection: Connection): Effect.Effect<string | undefined> =>
    Effect.suspend(() => {
      // Only a stream complete on the connection it opened with is delivered in full by one body.
      if (!stream.complete || stream.connection !== connection) return Effect.succeed(undefined)
      stream.connection = undefined
      return Effect.flatMap(Queue.clear(connection), (texts) => {
        Queue.shutdownUnsafe(connection)
        session.lastActive = clock.currentTimeMillisUnsafe()
        return Effect.as(forget(stream), texts.join(""))
      })
    })

  const body = (stream: LogicalStream, connection = stream.connection): Stream.Stream<Uint8Array> => {
    if (connection === undefined) return Stream.empty
    session.active++
    return Stream.fromQueue(connection).pipe(
      // Taking events makes room for the senders waiting on this stream.
      Stream.mapArrayEffect((texts) => Effect.as(pump(stream), texts)),
      Stream.encodeText,
      Stream.onExit((exit) =>
        Effect.suspend(() => {
          session.active--
          session.lastActive = clock.currentTimeMillisUnsafe()
          // Still the stream's connection: it was not cut off (closed early or replaced).
          const current = stream.connection === connection
          if (current) stream.connection = undefined
          Queue.shutdownUnsafe(connection)
          // Delivered in full: nobody will resume it.
          const forgotten = current && stream.complete && Exit.isSuccess(exit) ? forget(stream) : Effect.void
          // Without a connection the waiting senders go to the store (or the next GET).
          return Effect.andThen(forgotten, pump(stream))
        })
      )
    )
  }

  const primeIfAsked = (stream: LogicalStream, priming: boolean) =>
    priming && config.store !== undefined ? write(stream, "", config.retryMs) : Effect.void

  /**
   * Starts a POST's reply at once, so the client learns that its message was
   * taken (in order) before it sends the next: a priming event, or else a comment.
   */
  const startReply = (stream: LogicalStream, priming: boolean) =>
    priming && config.store !== undefined
      ? write(stream, "", config.retryMs)
      : Effect.sync(() => {
          if (stream.connection !== undefined) Queue.offerUnsafe(stream.connection, ACCEPTED)
        })

  const endConnection = (stream: LogicalStream | undefined) =>
    Effect.sync(() => {
      // Without a store the client could not get the rest: keep the connection.
      if (stream?.connection === undefined || config.store === undefined) return
      Queue.endUnsafe(stream.connection)
      stream.connection = undefined
      // Without a connection the waiting senders go to the store.
    }).pipe(Effect.andThen(stream === undefined ? Effect.void : pump(stream)))

  const session: HttpSession = {
    id: config.id,
    transport: new SessionTransport(
      send,
      (attached) => {
        if (pull !== undefined || receiver !== undefined) return false
        receiver = attached
        return true
      },
      () =>
        Stream.unwrap(
          Effect.map(pulled(), (p) =>
            Stream.fromQueue(p.queue).pipe(Stream.ensuring(Deferred.done(p.drained, Exit.void)))
          )
        )
    ),
    drained: Effect.suspend(() =>
      receiver === undefined ? Effect.flatMap(pulled(), (p) => Deferred.await(p.drained)) : receiver.drained
    ),
    protocolVersion: undefined,
    lastActive: clock.currentTimeMillisUnsafe(),
    active: 0,
    isClosed: () => closed,
    isPending: (id) => byRequest.has(id),
    trackInitialize: (id) => {
      initializeIds.add(id)
    },
    openPost: (requestIds, mode, priming) =>
      lock.withPermit(
        Effect.suspend(() => {
          const stream = newStream(false, mode === "json" ? [] : undefined)
          for (const id of requestIds) {
            stream.pending.add(id)
            byRequest.set(id, stream)
          }
          if (mode === "json") return Effect.succeed(stream)
          return attach(stream).pipe(Effect.andThen(startReply(stream, priming)), Effect.as(stream))
        })
      ),
    offer: (frame) =>
      closed
        ? Effect.succeed(false)
        : Effect.tap(
            receiver === undefined
              ? Effect.flatMap(pulled(), (p) => Queue.offer(p.queue, Result.succeed(frame)))
              : receiver.offer(Result.succeed(frame)),
            (accepted) => (accepted ? releaseCancelled(frame) : Effect.void)
          ),
    endInput: Effect.suspend(() => {
      if (receiver === undefined) return Effect.flatMap(pulled(), (p) => Effect.asVoid(Queue.end(p.queue)))
      receiver.end()
      return Effect.void
    }),
    body,
    completeText,
    openStandalone: (priming) =>
      lock.withPermit(
        Effect.suspend(() => {
          if (standaloneStream === undefined || standaloneStream.connection !== undefined) {
            return Effect.succeed(undefined)
          }
          return attach(standaloneStream).pipe(
            Effect.andThen(primeIfAsked(standaloneStream, priming)),
            Effect.andThen(
              Effect.sync(() => {
                for (const text of undelivered.splice(0, undelivered.length)) {
                  Queue.offerUnsafe(standaloneStream.connection!, text)
                }
              })
            ),
            Effect.as(standaloneStream)
          )
        })
      ),
    resume: (lastEventId) =>
      lock.withPermit(
        Effect.gen(function* () {
          if (config.store === undefined) return undefined
          const replay = yield* config.store
            .replayAfter(lastEventId)
            .pipe(Effect.catch((error) => Effect.as(Effect.logWarning(error.message), undefined)))
          const stream = replay === undefined ? undefined : streams.get(replay.streamId)
          // The event must belong to this session: ids are not capabilities.
          if (replay === undefined || stream === undefined) return undefined
          const connection = yield* attach(stream)
          // The replay covers what the GET stream missed.
          if (stream.standalone) undelivered.length = 0
          for (const event of replay.events) {
            Queue.offerUnsafe(
              connection,
              formatEvent({ id: event.id, event: event.data === "" ? undefined : "message", data: event.data })
            )
          }
          if (stream.complete) Queue.endUnsafe(connection)
          return stream
        })
      ),
    closeRequestStream: (requestId) => endConnection(byRequest.get(requestId)),
    closeStandaloneStream: Effect.suspend(() => endConnection(standaloneStream)),
    shutdown: Effect.suspend(() => {
      if (closed) return Effect.void
      closed = true
      for (const stream of streams.values()) {
        if (stream.collected !== undefined) {
          for (const id of stream.pending) stream.collected.push(sessionClosedResponse(id))
        }
        if (stream.connection !== undefined) Queue.endUnsafe(stream.connection)
        release(stream, Exit.fail(closedError))
        Deferred.doneUnsafe(stream.first, Exit.succeed(undefined))
        Deferred.doneUnsafe(stream.done, Exit.void)
      }
      byRequest.clear()
      if (receiver !== undefined) receiver.end()
      else if (pull !== undefined) Queue.endUnsafe(pull.queue)
      return Effect.forEach([...streams.values()], forget, { discard: true })
    })
  }
  return session
})
