/**
 * Where a Streamable HTTP server keeps the SSE events it sent, so a client
 * that lost its connection can reconnect with `Last-Event-ID` and receive
 * what it missed. Events are opaque strings (the `data` of the SSE event):
 * a shared store (Redis, a database) only has to keep strings per stream.
 *
 * The in-memory store is the default; it bounds the events kept per stream,
 * the number of streams and the size of everything kept, dropping the oldest
 * first. An event stays replayable until those bounds drop it (or its
 * session ends: the server then forgets every stream of the session, those
 * delivered in full included), however many times a client resumes after it.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/** Identifies one logical SSE stream (a POST's response stream or a session's GET stream). */
export type StreamId = string

/** An SSE event id: visible ASCII, unique across every stream of the store. */
export type EventId = string

/** One stored SSE event: its id and data. */
export interface StoredEvent {
  readonly id: EventId
  readonly data: string
}

/** The events after a `Last-Event-ID`, for resuming a stream. */
export interface Replay {
  /** The stream the event belonged to; the server checks it belongs to the asking session. */
  readonly streamId: StreamId
  /** The events stored after the given one, oldest first. */
  readonly events: ReadonlyArray<StoredEvent>
}

/**
 * What an event tells a shared store besides its data: the requests its
 * stream still owes an answer once this event is sent. A server writes it
 * only to a `shared` store that has `owed`.
 */
export interface AppendOptions {
  /** The ids of the requests still unanswered on the stream after this event; empty or absent when none. */
  readonly pending?: ReadonlyArray<JsonRpc.RequestId> | undefined
}

/** A stream whose last event left requests unanswered (see `owed`). */
export interface Owed {
  readonly streamId: StreamId
  /** The ids of the requests the stream still owes an answer. */
  readonly ids: ReadonlyArray<JsonRpc.RequestId>
}

/** A store could not be read or written; the server keeps serving without resumability for that event. */
export class EventStoreError extends Schema.TaggedError<EventStoreError>()("EventStoreError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/** Stores the events of Streamable HTTP streams so a client can resume one after a disconnect. */
export interface EventStoreShape {
  /** Stores one event of a stream and returns its id. */
  readonly append: (
    streamId: StreamId,
    data: string,
    options?: AppendOptions | undefined
  ) => Effect.Effect<EventId, EventStoreError>
  /**
   * The events after `eventId` on its stream, or undefined when the id is
   * unknown (never issued, evicted, or its stream forgotten).
   */
  readonly replayAfter: (eventId: EventId) => Effect.Effect<Replay | undefined, EventStoreError>
  /** Drops a stream: its session ended. */
  readonly forget: (streamId: StreamId) => Effect.Effect<void, EventStoreError>
  /**
   * Drops every stream of a session that ended: the streams whose id is
   * `sessionId`, an underscore and a suffix without one (the server names a
   * session's streams so). Without it, a session that ends forgets only the
   * streams it still lists; the ones it delivered in full stay until the
   * store's own bounds drop them, and a `shared` store replays them on
   * `Last-Event-ID` until then.
   *
   * Called when a session is deleted or expires, shared store or not; not
   * when a session with a `shared` store is let go to go on in another
   * process (`Released`) or left by a server that stops (`Shutdown`): its
   * next process writes and resumes the same streams.
   */
  readonly forgetSession?: ((sessionId: string) => Effect.Effect<void, EventStoreError>) | undefined
  /**
   * The streams of a session whose last event (still resumable) left
   * requests unanswered, as `append` was told (`pending`). A session reopened
   * in another process (its process was lost, or let it go) answers each of
   * them there with an InternalError (-32603), appended to its stream, so
   * that a client resuming it gets the answer. Used only when `shared`;
   * without it, a request in flight when its process was lost is answered
   * only on the connection that carried it.
   */
  readonly owed?: ((sessionId: string) => Effect.Effect<ReadonlyArray<Owed>, EventStoreError>) | undefined
  /**
   * Whether several server processes share this store (a database): a GET
   * resuming a session this process does not hold is then answered with the
   * events the store kept for it, which only `forgetSession` takes away when
   * the session ends (a store without it keeps them, replayable, for its own
   * retention). Default false (the in-memory store).
   */
  readonly shared?: boolean | undefined
}

/** The event store a Streamable HTTP server uses for resumable streams. */
export class EventStore extends Context.Service<EventStore, EventStoreShape>()("@effect-mcp/http/EventStore") {}

/** Limits of the in-memory event store. */
export interface MemoryOptions {
  /** Events kept per stream; older ones are dropped (and can no longer be resumed after). Default 1,024. */
  readonly maxEventsPerStream?: number | undefined
  /** Streams kept; the oldest stream is dropped first. Default 10,000. */
  readonly maxStreams?: number | undefined
  /**
   * Size of the event data kept across every stream, in UTF-16 code units
   * (bytes, for the ASCII JSON most events are); the oldest events are
   * dropped first. Default 64 MiB.
   */
  readonly maxBytes?: number | undefined
}

interface MemoryStream {
  readonly events: Array<StoredEvent>
  next: number
  /** The requests its last event left unanswered. */
  pending: ReadonlyArray<JsonRpc.RequestId> | undefined
}

/** The session a stream id names (see `forgetSession`); undefined for an id of no session. */
const sessionOf = (streamId: StreamId): string | undefined => {
  const at = streamId.lastIndexOf("_")
  return at < 0 ? undefined : streamId.slice(0, at)
}

/** An in-memory store for one server process. */
export const makeMemory = (options?: MemoryOptions): EventStoreShape => {
  const maxEvents = Math.max(1, options?.maxEventsPerStream ?? 1024)
  const maxStreams = Math.max(1, options?.maxStreams ?? 10_000)
  const maxBytes = Math.max(1, options?.maxBytes ?? 64 * 1024 * 1024)
  let bytes = 0
  // Map iteration follows insertion order, so the first key is the oldest stream.
  const streams = new Map<StreamId, MemoryStream>()
  const index = new Map<EventId, StreamId>()
  // The streams of each session, so the end of one drops its streams without a scan of every stream.
  const bySession = new Map<string, Set<StreamId>>()

  const link = (streamId: StreamId) => {
    const session = sessionOf(streamId)
    if (session === undefined) return
    const own = bySession.get(session)
    if (own === undefined) bySession.set(session, new Set([streamId]))
    else own.add(streamId)
  }

  const unlink = (streamId: StreamId) => {
    streams.delete(streamId)
    const session = sessionOf(streamId)
    if (session === undefined) return
    const own = bySession.get(session)
    if (own?.delete(streamId) === true && own.size === 0) bySession.delete(session)
  }

  const drop = (streamId: StreamId) => {
    const stream = streams.get(streamId)
    if (stream === undefined) return
    for (const event of stream.events) {
      index.delete(event.id)
      bytes -= event.data.length
    }
    unlink(streamId)
  }

  const evictOldest = (stream: MemoryStream) => {
    const evicted = stream.events.shift()
    if (evicted === undefined) return
    index.delete(evicted.id)
    bytes -= evicted.data.length
  }

  // Oldest streams first, oldest events first; the event just stored is kept.
  const trim = (current: StreamId) => {
    for (const [streamId, stream] of streams) {
      while (bytes > maxBytes && stream.events.length > (streamId === current ? 1 : 0)) evictOldest(stream)
      if (bytes <= maxBytes) return
      if (streamId !== current) unlink(streamId)
    }
  }

  return {
    append: (streamId, data, options) =>
      Effect.sync(() => {
        let stream = streams.get(streamId)
        if (stream === undefined) {
          if (streams.size >= maxStreams) {
            const oldest = streams.keys().next()
            if (oldest.done !== true) drop(oldest.value)
          }
          stream = { events: [], next: 0, pending: undefined }
          streams.set(streamId, stream)
          link(streamId)
        }
        const id = `${streamId}_${stream.next++}`
        stream.events.push({ id, data })
        stream.pending = options?.pending !== undefined && options.pending.length > 0 ? options.pending : undefined
        index.set(id, streamId)
        bytes += data.length
        if (stream.events.length > maxEvents) evictOldest(stream)
        if (bytes > maxBytes) trim(streamId)
        return id
      }),
    replayAfter: (eventId) =>
      Effect.sync(() => {
        const streamId = index.get(eventId)
        const stream = streamId === undefined ? undefined : streams.get(streamId)
        if (streamId === undefined || stream === undefined) return undefined
        const at = stream.events.findIndex((event) => event.id === eventId)
        return at < 0 ? undefined : { streamId, events: stream.events.slice(at + 1) }
      }),
    forget: (streamId) => Effect.sync(() => drop(streamId)),
    owed: (sessionId) =>
      Effect.sync(() => {
        const owed: Array<Owed> = []
        for (const streamId of bySession.get(sessionId) ?? []) {
          const stream = streams.get(streamId)
          // A stream whose events were all dropped cannot be resumed: nothing reaches its client.
          if (stream?.pending !== undefined && stream.events.length > 0) owed.push({ streamId, ids: stream.pending })
        }
        return owed
      }),
    forgetSession: (sessionId) =>
      Effect.sync(() => {
        const own = bySession.get(sessionId)
        if (own !== undefined) for (const streamId of [...own]) drop(streamId)
      })
  }
}

/** Provides an in-memory `EventStore`. */
export const layerMemory = (options?: MemoryOptions): Layer.Layer<EventStore> =>
  Layer.sync(EventStore, () => makeMemory(options))
