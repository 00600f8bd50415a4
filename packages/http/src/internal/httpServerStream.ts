/**
 * The streams of a Streamable HTTP session on the server: a logical stream
 * is the reply of one POST, or the session's GET stream; its HTTP connection
 * (an SSE body) may drop and be replaced by a GET carrying `Last-Event-ID`.
 * What a stream holds, what every session of a server shares, and the SSE
 * comments the server writes.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import type * as EventStore from "../EventStore.ts"
import * as Wire from "./httpWire.ts"
import { PushQueue } from "@effect-mcp/engine/PushQueue"
import type * as McpMetrics from "@effect-mcp/engine/McpMetrics"

/** What every session of one server shares. */
export interface Settings {
  /** Counts the sessions and bytes of the transport, when metrics are on. */
  readonly meter?: McpMetrics.TransportMeter | undefined
  readonly clock: Clock.Clock
  /** When the server started: activity is kept relative to it (a small integer, not a boxed number). */
  readonly epoch: number
  /** Present when the streams of stateful sessions are resumable. */
  readonly store: EventStore.EventStoreShape | undefined
  /** The `retry` sent with priming events, in milliseconds. */
  readonly retryMs: number | undefined
  /** Whether stateful sessions offer a GET stream for messages unrelated to a request. */
  readonly standalone: boolean
  /** Events a connection buffers before `send` suspends. */
  readonly maxBuffered: number
  /** A connection whose reader takes nothing for this long while events wait is closed, in milliseconds. */
  readonly writeTimeoutMs: number
  /** A connection whose reader has taken nothing for this long gets a keepalive comment, in milliseconds. */
  readonly keepaliveMs: number
  /** What the server counts across its sessions. */
  readonly counters: Counters
}

/** What a server counts across its sessions; read by users through `StreamableHttpServer.stats`. */
export interface Counters {
  /** Connections closed because their reader stalled past the write timeout. */
  evicted: number
  /** Idempotent notifications not sent because the same one was still unread. */
  coalesced: number
}

/**
 * The SSE text waiting for one HTTP connection of a stream, read by its body.
 * The engine's push queue (a microtask wakes the body, not a macrotask per
 * event); the send line keeps it within `maxBuffered` itself, since a frame
 * becomes an event only when it is its turn (see httpServerSendLine.ts).
 */
export type Connection = PushQueue<string>

/** A new connection buffer. */
export const newConnection = (): Connection => new PushQueue<string>(Number.MAX_SAFE_INTEGER)

/** Queues SSE text on a connection, unless it was ended (its reader gets no more). */
export const push = (connection: Connection, text: string): void => {
  if (!connection.closed) connection.offerNow(text)
}

/** Everything queued on an ended connection, taken at once (empty when nothing is). */
export const takeAll = (connection: Connection): Effect.Effect<ReadonlyArray<string>> =>
  Effect.orElseSucceed(connection.take, () => [])

/** The text of a connection as its body reads it, until the connection ends. */
export const textOf = (connection: Connection): Stream.Stream<string> =>
  Stream.fromPull(Effect.succeed(connection.take))

/**
 * The text of a stream's connection as its body reads it, with a keepalive
 * comment queued whenever its reader has taken nothing for `everyMs` and
 * nothing waits for it: every SSE body of the server (a POST's reply,
 * stateless or not, and the GET stream) is kept alive by this one timer of
 * its own. Its own, not a server-wide one: the body is read in the context
 * of its request, and some platforms run a request's timers only in it
 * (workerd); a write is also how such a platform learns that the client left,
 * which cancels the body, and the reply's request with it. The timer lives
 * as long as the body; `now` is the server's clock (what `takenAt` is on).
 */
export const keptAliveTextOf = (
  stream: LogicalStream,
  connection: Connection,
  everyMs: number,
  now: () => number
): Stream.Stream<string> => {
  if (!Number.isFinite(everyMs) || everyMs <= 0) return textOf(connection)
  const beat = Effect.suspend(() => {
    const wait = stream.takenAt + everyMs - now()
    if (wait > 0) return Effect.sleep(wait)
    // A reader that takes nothing, with events waiting, is the write timeout's to judge.
    if (connection.size === 0) push(connection, KEEPALIVE)
    return Effect.sleep(everyMs)
  })
  return Stream.unwrap(Effect.as(Effect.forkScoped(Effect.forever(beat)), textOf(connection)))
}

/** A send waiting for room on its stream, in the stream's line. */
export interface Waiter {
  readonly data: string
  readonly ids: ReadonlyArray<JsonRpc.RequestId>
  readonly head: JsonRpc.Message | undefined
  /** The idempotency key of a notification whose sender does not wait. */
  readonly key: string | undefined
}

/**
 * The sends waiting for room on a stream: the engine's push queue used as a
 * line alone (the send line admits them itself, as room appears on whichever
 * connection the stream has then; see httpServerSendLine.ts).
 */
export type Line = PushQueue<Waiter>

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
  /** Sends waiting for room on the connection, in arrival order; made when the first one waits. */
  line: Line | undefined
  connection: Connection | undefined
  complete: boolean
  /** When the reader of the connection last took events (or the connection opened), in server time. */
  takenAt: number
  /**
   * Idempotent notifications not yet read: key -> the event text queued on
   * the connection, or "" while the notification waits in the line.
   */
  unread: Map<string, string> | undefined
}

// An SSE comment: opens a reply's stream without an event (clients skip comments).
export const ACCEPTED = ":\n\n"

// An SSE comment sent on a silent connection, so proxies keep it and a dead reader shows.
export const KEEPALIVE = ":keepalive\n\n"

// Messages for the GET stream while no GET is open wait for the next GET, up to this many.
export const maxUndelivered = 1024

/** A new stream; `complete` for one remade only to carry a replay. */
export const makeStream = (
  id: string,
  standalone: boolean,
  collected: Array<JsonRpc.Message> | undefined,
  complete = false
): LogicalStream => ({
  id,
  standalone,
  pending: new Set(),
  collected,
  done: Deferred.makeUnsafe<void>(),
  first: Deferred.makeUnsafe<JsonRpc.Message | undefined>(),
  line: undefined,
  connection: undefined,
  complete,
  takenAt: 0,
  unread: undefined
})

/** Sends waiting on a stream. */
export const waiting = (stream: LogicalStream): number => (stream.line === undefined ? 0 : stream.line.waiting)

/** The stream's line, made on first use. */
export const lineOf = (stream: LogicalStream): Line => {
  if (stream.line === undefined) stream.line = new PushQueue<Waiter>(1)
  return stream.line
}

/**
 * Ends the waits of a stream's suspended senders; their frames are never
 * sent. Their sends then end as the session says: failed once it is closed,
 * done otherwise (the stream was answered in full).
 */
export const release = (stream: LogicalStream): void => {
  const line = stream.line
  if (line === undefined) return
  stream.line = undefined
  line.close()
}

/** Records an idempotent notification as unread: its queued text, or "" while it waits in the line. */
export const noteUnread = (stream: LogicalStream, key: string, text: string): void => {
  if (stream.unread === undefined) stream.unread = new Map()
  stream.unread.set(key, text)
}

/** A connection's queued notifications are gone with it (waiting ones keep their place). */
export const forgetUnread = (stream: LogicalStream): void => {
  const unread = stream.unread
  if (unread === undefined) return
  for (const [key, text] of unread) if (text !== "") unread.delete(key)
}

/** The reader took `texts`: the idempotent notifications among them are read. */
export const markRead = (stream: LogicalStream, texts: ReadonlyArray<string>): void => {
  const unread = stream.unread
  if (unread === undefined) return
  for (const [key, text] of unread) if (text !== "" && texts.includes(text)) unread.delete(key)
}

/** Priming events (an id with empty data) are understood by clients of 2025-11-25 and later. */
export const primes = (version: string | undefined): boolean =>
  version !== undefined && ProtocolVersion.isSupported(version) && ProtocolVersion.isAtLeast(version, "2025-11-25")

/** The reply carrying a stream's SSE body. */
export const sseResponse = (
  body: Stream.Stream<Uint8Array>,
  headers: Record<string, string>
): HttpServerResponse.HttpServerResponse =>
  Wire.withHeaders(HttpServerResponse.stream(body, { contentType: Wire.CONTENT_SSE }), {
    ...Wire.sseHeaders,
    ...headers
  })
