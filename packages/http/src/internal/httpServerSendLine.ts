/**
 * The send line of a Streamable HTTP session on the server: routes what the
 * MCP session sends to the stream it belongs to and writes it there, in
 * order. A response (and progress or logs sent for a request) goes to the
 * stream of the POST that carried the request; anything else goes to the
 * session's GET stream. Each message goes to exactly one stream.
 *
 * A connection buffers a bounded number of events: when its client reads
 * slowly, `send` suspends, and suspended senders are served strictly in
 * arrival order (a new sender queues behind them), in the stream's line (the
 * engine's push queue, whose writers' line this module admits itself). A
 * frame becomes an event (stored, numbered, queued) only when it is its turn,
 * so an interrupted sender leaves nothing behind.
 *
 * No send waits on one peer for long: an idempotent notification (a
 * list_changed, a resources/updated for a URI) that is still unread on its
 * stream is not sent again, and never waits (it holds its place in the line
 * without its sender); a connection whose reader takes nothing for the write
 * timeout while events wait is closed (the client resumes it), and counted.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Transport from "@effect-mcp/engine/Transport"
import { forgiving, owing } from "./owedAnswers.ts"
import * as Streams from "./httpServerStream.ts"
import type { LogicalStream, Settings, Waiter } from "./httpServerStream.ts"
import { formatEvent } from "./httpWire.ts"
import { cancelledIdsOf, idempotencyKeyOf, messagesOf, responseIdsOf } from "./jsonRpcSniff.ts"
import { StreamTables } from "./httpServerStreamTables.ts"
import type { Place } from "@effect-mcp/engine/PushQueue"

export const closedError = new Transport.TransportError({ reason: "Closed", message: "HTTP session closed" })

/**
 * The routing and send line of one session, over its stream tables;
 * `HttpSession` adds the transport's input and the HTTP side. Behaviour
 * lives on the prototype: a server holds many idle sessions.
 */
export abstract class SendLine extends StreamTables {
  /** The negotiated revision, learned from the `initialize` response. */
  protocolVersion: string | undefined = undefined
  /** When the session was last active, in milliseconds since `settings.epoch`. */
  protected activeAt: number
  protected closed = false

  constructor(id: string | undefined, settings: Settings) {
    super(id, settings)
    this.activeAt = this.now()
  }

  /**
   * Bound: transports hand `send` around on its own. Bound on each read, not
   * kept: a server holds many idle sessions, and a bound function kept costs
   * each one 56 bytes (the Peer calls it as a method, so it reads it per frame).
   */
  get send(): (
    frame: Transport.Outgoing,
    options?: Transport.SendOptions
  ) => Effect.Effect<void, Transport.TransportError> {
    return this.sendFrame.bind(this)
  }

  protected now(): number {
    return this.settings.clock.currentTimeMillisUnsafe() - this.settings.epoch
  }

  /**
   * Stores (when resumable) and writes one event, which answers the requests
   * `answers`; callers hold the lock so event order is send order.
   */
  protected write(
    stream: LogicalStream,
    data: string,
    retryMs?: number,
    key?: string,
    answers?: ReadonlyArray<JsonRpc.RequestId>
  ): Effect.Effect<void> {
    // A closed session stores nothing more: a POST that found it just before it closed would leave a stream behind.
    const store = this.closed ? undefined : this.store
    if (store === undefined) return Effect.sync(() => this.writeText(stream, data, undefined, retryMs, key))
    return Effect.map(
      store
        .append(stream.id, data, owing(store, stream, answers))
        .pipe(
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`event not stored, it cannot be resumed: ${error.message}`), undefined)
          )
        ),
      (id) => this.writeText(stream, data, id, retryMs, key)
    )
  }

  protected writeText(
    stream: LogicalStream,
    data: string,
    id: string | undefined,
    retryMs: number | undefined,
    key?: string
  ): void {
    const text = formatEvent({ id, event: data === "" ? undefined : "message", data, retryMs })
    if (stream.connection !== undefined) {
      Streams.push(stream.connection, text)
      if (key !== undefined) Streams.noteUnread(stream, key, text)
    } else if (stream.standalone && data !== "") {
      if (this.undelivered === undefined) this.undelivered = []
      this.undelivered.push(text)
      if (this.undelivered.length > Streams.maxUndelivered) this.undelivered.shift()
    }
  }

  protected finish(stream: LogicalStream): void {
    stream.complete = true
    // A JSON reply is never resumed.
    if (stream.collected !== undefined) this.unlist(stream)
    if (stream.connection !== undefined) stream.connection.close()
    // What still waits was sent for requests that are answered or cancelled: nobody reads it.
    Streams.release(stream)
    Deferred.doneUnsafe(stream.first, Exit.succeed(undefined))
    Deferred.doneUnsafe(stream.done, Exit.void)
  }

  protected settle(stream: LogicalStream, ids: ReadonlyArray<JsonRpc.RequestId>): void {
    const byRequest = this.byRequestMap
    for (const id of ids) {
      stream.pending.delete(id)
      if (byRequest?.get(id) === stream) byRequest.delete(id)
    }
    if (byRequest?.size === 0) this.byRequestMap = undefined
    if (stream.pending.size === 0 && !stream.standalone) this.finish(stream)
  }

  protected learnVersion(frame: Transport.Outgoing): void {
    const initializeIds = this.initializeIds
    if (initializeIds === undefined) return
    for (const message of messagesOf(frame)) {
      if (!JsonRpc.isSuccess(message) || !initializeIds.has(message.id)) continue
      initializeIds.delete(message.id)
      const version = (message.result as { readonly protocolVersion?: unknown } | null)?.protocolVersion
      // The revision's own constant, not the decoded reply's copy: every idle session would hold one.
      if (typeof version === "string") this.protocolVersion = ProtocolVersion.all.find((v) => v === version) ?? version
    }
    if (initializeIds.size === 0) this.initializeIds = undefined
  }

  protected route(frame: Transport.Outgoing, related: JsonRpc.RequestId | undefined): LogicalStream | undefined {
    const ids = responseIdsOf(frame)
    const byRequest = this.byRequestMap
    if (ids.length > 0) {
      if (byRequest === undefined) return undefined
      for (const id of ids) {
        const stream = byRequest.get(id)
        if (stream !== undefined) return stream
      }
      return undefined
    }
    if (related !== undefined) {
      const stream = byRequest?.get(related)
      // A JSON reply carries only responses; what a handler sends meanwhile goes to the GET stream.
      if (stream !== undefined && stream.collected === undefined) return stream
    }
    return this.standalone
  }

  protected hasRoom(stream: LogicalStream): boolean {
    return stream.connection === undefined || stream.connection.size < this.settings.maxBuffered
  }

  /** Makes a frame an event of its stream (or drops it); callers hold the lock. */
  protected admit(
    stream: LogicalStream,
    data: string,
    ids: ReadonlyArray<JsonRpc.RequestId>,
    head: JsonRpc.Message | undefined,
    key: string | undefined
  ): Effect.Effect<void> {
    if (key !== undefined) stream.unread?.delete(key)
    if (!stream.standalone) Deferred.doneUnsafe(stream.first, Exit.succeed(head))
    if (stream.connection === undefined && this.store === undefined && !stream.standalone) {
      this.settle(stream, ids)
      return Effect.logDebug("dropped a message: its stream has no connection and no event store")
    }
    if (this.store === undefined) {
      this.writeText(stream, data, undefined, undefined, key)
      this.settle(stream, ids)
      return Effect.void
    }
    return Effect.andThen(
      this.write(stream, data, undefined, key, ids),
      Effect.sync(() => this.settle(stream, ids))
    )
  }

  /** Admits waiting senders, first come first served, while their stream has room. */
  protected pump(stream: LogicalStream): Effect.Effect<void> {
    return Effect.suspend(() =>
      Streams.waiting(stream) === 0
        ? Effect.void
        : this.withLock(
            Effect.whileLoop({
              while: () => !this.closed && Streams.waiting(stream) > 0 && this.hasRoom(stream),
              body: () => {
                // Out of the line first (its sender resumes): an interrupt arriving meanwhile finds it taken.
                const waiter = stream.line!.admit()!
                return this.admit(stream, waiter.data, waiter.ids, waiter.head, waiter.key)
              },
              step: () => {}
            })
          ).pipe(Effect.uninterruptible)
    )
  }

  /**
   * Routes and admits a frame at once when its stream has room and nobody
   * waits ahead of it; otherwise returns the waiter that holds its place.
   */
  protected enqueue(
    frame: Transport.Outgoing,
    related: JsonRpc.RequestId | undefined
  ): Effect.Effect<readonly [Streams.Line, Place<Waiter>] | undefined> {
    return Effect.suspend((): Effect.Effect<readonly [Streams.Line, Place<Waiter>] | undefined> => {
      const stream = this.route(frame, related)
      if (stream === undefined) {
        return Effect.as(Effect.logDebug("dropped a message with no stream to carry it"), undefined)
      }
      const ids = responseIdsOf(frame)
      const head = messagesOf(frame)[0]
      if (stream.collected !== undefined) {
        Deferred.doneUnsafe(stream.first, Exit.succeed(head))
        stream.collected.push(...messagesOf(frame))
        this.settle(stream, ids)
        return Effect.succeed(undefined)
      }
      // Only a notification can be idempotent: a response or request never pays for the look.
      const key = ids.length === 0 && stream.connection !== undefined ? idempotencyKeyOf(frame) : undefined
      if (key !== undefined && stream.unread?.has(key) === true) {
        // The same notification is still unread: the client will act on that one.
        this.settings.counters.coalesced++
        return Effect.succeed(undefined)
      }
      const data = JsonRpcCodec.encode(frame)
      if (Streams.waiting(stream) === 0 && this.hasRoom(stream)) {
        return Effect.as(this.admit(stream, data, ids, head, key), undefined)
      }
      const line = Streams.lineOf(stream)
      const place = line.enterLine({ data, ids, head, key })
      if (key !== undefined) {
        // It holds its place without its sender: a broadcast never waits on this peer.
        Streams.noteUnread(stream, key, "")
        return Effect.succeed(undefined)
      }
      return Effect.succeed([line, place] as const)
    })
  }

  protected sendFrame(
    frame: Transport.Outgoing,
    options?: Transport.SendOptions
  ): Effect.Effect<void, Transport.TransportError> {
    return Effect.suspend((): Effect.Effect<void, Transport.TransportError> => {
      if (this.closed) return Effect.fail(closedError)
      this.learnVersion(frame)
      // Holding a place in the line and leaving it are atomic; only the wait is interruptible.
      return Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(this.withLock(this.enqueue(frame, options?.relatedRequestId)), (queued) => {
          if (queued === undefined) return Effect.void
          // Interrupted while it waits, the place leaves the line (the queue sees to it).
          return Effect.flatMap(restore(queued[0].awaitAdmission(queued[1])), (admitted) =>
            admitted || !this.closed ? Effect.void : Effect.fail(closedError)
          )
        })
      )
    })
  }

  /**
   * A cancelled request is never answered: its stream stops waiting for it
   * (and ends when nothing else is pending: a JSON reply then ends without
   * its response, blank when it had no other). A late response is dropped.
   * A store that keeps debts learns that the stream no longer owes it.
   */
  protected releaseCancelled(frame: JsonRpcCodec.Decoded): Effect.Effect<void> {
    const ids = cancelledIdsOf(frame)
    if (ids === undefined) return Effect.void
    const cancelled = ids
    return this.withLock(
      Effect.suspend(() => {
        const released: Array<LogicalStream> = []
        for (const id of cancelled) {
          const stream = this.byRequestMap?.get(id)
          if (stream === undefined) continue
          this.settle(stream, [id])
          if (!released.includes(stream)) released.push(stream)
        }
        return Effect.forEach(released, (stream) => this.forgive(stream), { discard: true })
      })
    )
  }

  /**
   * Tells a store that keeps debts what `stream` still owes once requests of
   * it were cancelled, by an empty event (a client resuming the stream skips
   * it, as it skips a priming event); not sent on the connection, whose
   * client knows already. Callers hold the lock, so it falls in send order.
   */
  protected forgive(stream: LogicalStream): Effect.Effect<void> {
    const store = this.closed ? undefined : this.store
    const options = store === undefined ? undefined : forgiving(store, stream)
    if (store === undefined || options === undefined) return Effect.void
    return store.append(stream.id, "", options).pipe(
      Effect.asVoid,
      Effect.catch((error) => Effect.logWarning(`a cancelled request stays owed in the event store: ${error.message}`))
    )
  }

  /** The reader took `texts`: the notifications among them are read, and the connection is alive. */
  protected taken(stream: LogicalStream, texts: ReadonlyArray<string>): void {
    stream.takenAt = this.now()
    // Events the client reads are activity; keepalives it happens to take are not.
    if (texts.length > 1 || texts[0] !== Streams.KEEPALIVE) this.activeAt = stream.takenAt
    Streams.markRead(stream, texts)
  }

  /**
   * Closes the connections whose reader took nothing for the write timeout
   * while events waited for it; returns how many were closed. Run by the
   * server on a timer. Keepalives are not its business: every SSE body sends
   * its own (`Streams.keptAliveTextOf`), stateless replies included.
   */
  watch(): Effect.Effect<number> {
    return Effect.suspend(() => {
      const streams = this.streamMap
      if (streams === undefined || this.closed) return Effect.succeed(0)
      const now = this.now()
      const stalled: Array<LogicalStream> = []
      for (const stream of streams.values()) {
        const connection = stream.connection
        if (connection === undefined) continue
        if (
          (connection.size > 0 || Streams.waiting(stream) > 0) &&
          now - stream.takenAt >= this.settings.writeTimeoutMs
        ) {
          stalled.push(stream)
        }
      }
      return Effect.as(
        Effect.forEach(stalled, (stream) => this.evict(stream), { discard: true }),
        stalled.length
      )
    })
  }

  /** Closes a stalled connection: its waiting senders go to the store (or the next GET), and the client resumes. */
  protected evict(stream: LogicalStream): Effect.Effect<void> {
    const connection = stream.connection
    if (connection === undefined) return Effect.void
    stream.connection = undefined
    Streams.forgetUnread(stream)
    this.settings.counters.evicted++
    connection.halt()
    return Effect.andThen(Effect.logDebug(`closed a stalled SSE connection of stream ${stream.id}`), this.pump(stream))
  }
}
