/**
 * Reading SSE streams on the client: a POST's reply stream or the session's
 * GET stream. A stream that ends early (before every response it owes) is
 * resumed with a GET carrying `Last-Event-ID`, after the server's `retry`
 * delay (or `initialDelay`); failed attempts are retried on an exponential
 * backoff from there. The GET stream is re-opened the same way.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Sse from "effect/encoding/Sse"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Transport from "@effect-mcp/engine/Transport"
import { CONTENT_SSE } from "./httpWire.ts"

/** Largest SSE body of declared length read whole rather than as a stream. */
const WHOLE_BODY_BYTES = 64 * 1024

/** Default bound of one SSE event, as the stdio transport bounds a frame. */
export const defaultMaxEventBytes = 64 * 1024 * 1024

/** An I/O failure of the HTTP client: a request that failed, a body that could not be read. */
export const io = (message: string, cause?: unknown) =>
  new Transport.TransportError({ reason: "Io", message, ...(cause === undefined ? {} : { cause }) })

/** An event over the bound: reported, never skipped (resuming would replay it forever). */
export const tooLarge = (maxEventBytes: number) =>
  new Transport.TransportError({
    reason: "FrameTooLarge",
    message: `an SSE event exceeds the limit of ${maxEventBytes} characters`
  })

/** How a stream that ended is resumed: the transport's `reconnect` options, defaults applied. */
export interface Reconnect {
  /** The wait before reconnecting when the server sent no `retry`. */
  readonly initialDelay: Duration.Duration
  /** Upper bound of every wait. */
  readonly maxDelay: Duration.Duration
  /** Growth of the wait after each failed attempt. */
  readonly factor: number
  /** Failed reconnection attempts retried before the stream is given up. */
  readonly maxRetries: number
}

/**
 * The shortest wait taken from a server's `retry`: a server that ends its
 * stream at once and asks for `retry: 0` would otherwise have the client
 * reopen it in a loop, as fast as the two can go.
 */
export const minRetry = Duration.millis(100)

/**
 * The wait before reconnecting a stream that ended: the server's `retry`
 * (`hint`, at least `minRetry`) when it sent one, else `initialDelay`; at
 * most `maxDelay`.
 */
export const reconnectDelay = (reconnect: Reconnect, hint: Duration.Duration | undefined): Duration.Duration =>
  Duration.min(hint === undefined ? reconnect.initialDelay : Duration.max(hint, minRetry), reconnect.maxDelay)

/**
 * The waits after failed reconnection attempts: at most `maxRetries`, the
 * first `factor` times the uncapped reconnection delay (`hint ??
 * initialDelay`), each next one `factor` times the last, every one capped at
 * `maxDelay`. A successful reconnection starts the backoff over.
 */
export const retrySchedule = (
  reconnect: Reconnect,
  hint: Duration.Duration | undefined
): Schedule.Schedule<Duration.Duration> =>
  Schedule.min([
    Schedule.exponential(Duration.times(hint ?? reconnect.initialDelay, reconnect.factor), reconnect.factor),
    Schedule.spaced(reconnect.maxDelay)
  ]).pipe(Schedule.upTo({ times: reconnect.maxRetries }))

/** One event of a stream, as delivered. */
export interface ReadEvent {
  readonly data: string
  readonly event: string
}

/** What reading a stream needs of the transport around it. */
export interface Config {
  readonly reconnect: Reconnect
  /** Delivers one event's data; returns the ids of the responses it carried. */
  readonly deliver: (event: ReadEvent) => Effect.Effect<ReadonlyArray<JsonRpc.RequestId>>
  /** Opens the GET stream, resuming after `lastEventId` when given. */
  readonly get: (
    lastEventId: string | undefined
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>
  /** The server forgot the session (404): stop and let the session layer re-initialize. */
  readonly expired: Effect.Effect<void>
  readonly isClosed: () => boolean
  /** Bound of one event's pending text (characters). */
  readonly maxEventBytes: number
  /** An event exceeded `maxEventBytes`: the stream is abandoned and the transport fails. */
  readonly failed: (error: Transport.TransportError) => Effect.Effect<void>
}

/** Whether a `content-type` names an event stream. */
export const isSseContent = (contentType: string | undefined): boolean =>
  contentType?.toLowerCase().startsWith(CONTENT_SSE) === true

/** Whether a response is an event stream. */
export const isSse = (response: HttpClientResponse.HttpClientResponse): boolean =>
  isSseContent(response.headers["content-type"])

/** What a stream's events told so far: where to resume, and the server's `retry`. */
interface StreamState {
  lastEventId: string | undefined
  retry: Duration.Duration | undefined
}

/**
 * Reads one response's events; resolves when the body ends or drops (a lost
 * connection), and with the error when an event is too large.
 */
const readBody = (
  response: HttpClientResponse.HttpClientResponse,
  state: StreamState,
  onEvent: (event: ReadEvent) => Effect.Effect<void>,
  maxEventBytes: number
): Effect.Effect<Transport.TransportError | undefined> =>
  Effect.suspend(() => {
    const events: Array<ReadEvent> = []
    let oversized = false
    const parser = Sse.makeParser(
      (event) => {
        if (event._tag === "Retry") {
          state.retry = event.duration
          return
        }
        // The parser bounds only an event split across chunks; one within a chunk is checked here.
        if (event.data.length > maxEventBytes) {
          oversized = true
          return
        }
        if (event.id !== undefined) state.lastEventId = event.id
        // Priming events carry an id and no data.
        if (event.data !== "") events.push({ data: event.data, event: event.event })
      },
      { maxEventSize: maxEventBytes }
    )
    const drain = Effect.suspend(() => {
      const ready = events.splice(0, events.length)
      return Effect.forEach(ready, onEvent, { discard: true })
    })
    // A short body of known length (a reply the server had whole) is read at once: the
    // stream machinery would cost more than the events.
    const length = response.headers["content-length"]
    if (length !== undefined && Number(length) <= WHOLE_BODY_BYTES) {
      return Effect.matchEffect(response.text, {
        // A body cut short is a dropped connection, as when streaming.
        onFailure: () => Effect.succeed(undefined),
        onSuccess: (text) => {
          const error = parser.feed(text)
          if (error !== undefined || oversized) return Effect.succeed(tooLarge(maxEventBytes))
          return Effect.as(drain, undefined)
        }
      })
    }
    return response.stream.pipe(
      Stream.decodeText,
      Stream.runForEach((chunk) =>
        Effect.suspend(() => {
          const error = parser.feed(chunk)
          if (error !== undefined || oversized) return Effect.fail(tooLarge(maxEventBytes))
          return drain
        })
      ),
      Effect.matchCause({
        onSuccess: () => undefined,
        // Only the parser fails with a TransportError; anything else is a dropped connection.
        onFailure: (cause) => {
          const error = cause.reasons.find(Cause.isFailReason)?.error
          return error instanceof Transport.TransportError ? error : undefined
        }
      })
    )
  })

/**
 * A POST's stream that ended, or could not be resumed, before every response
 * came: the POST fails, and the transport answers the requests still owed one
 * with that failure (`data.transportError`, which McpClient turns back into
 * the `TransportError`): the connection was lost, the server said nothing.
 */
const lost = (why: string) => Effect.fail(io(`the connection was lost: ${why}`))

/** How an attempt to open the stream ended, when it is not to be retried. */
type Opened =
  | { readonly _tag: "Open"; readonly response: HttpClientResponse.HttpClientResponse }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Expired" }
  | { readonly _tag: "Refused"; readonly status: number }

/** An attempt worth retrying: the GET failed, or the server answered with no event stream for now. */
const retryable = { _tag: "Retryable" } as const

/** One GET of the stream, classified. */
const attempt = (config: Config, lastEventId: string | undefined): Effect.Effect<Opened, typeof retryable> =>
  Effect.suspend(() => {
    if (config.isClosed()) return Effect.succeed<Opened>({ _tag: "Closed" })
    return Effect.flatMap(Effect.result(config.get(lastEventId)), (next) => {
      if (next._tag === "Failure") return Effect.fail(retryable)
      const response = next.success
      const status = response.status
      if (status === 200) {
        return isSse(response) ? Effect.succeed<Opened>({ _tag: "Open", response }) : Effect.fail(retryable)
      }
      return Effect.andThen(Effect.ignore(response.text), (): Effect.Effect<Opened, typeof retryable> => {
        if (status === 404) return Effect.succeed({ _tag: "Expired" })
        // No GET stream on this server (405), or it refuses to resume this one.
        if (status === 405 || (status >= 400 && status < 500 && status !== 408 && status !== 429)) {
          return Effect.succeed({ _tag: "Refused", status })
        }
        return Effect.fail(retryable)
      })
    })
  })

/**
 * Opens the stream (again), retrying failed attempts on `retrySchedule`.
 * Yields the response to read, or undefined once the stream is over
 * (refused, expired or closed); a POST's stream that cannot be resumed fails
 * (see `lost`).
 */
const connect = (
  config: Config,
  state: StreamState,
  pending: Set<JsonRpc.RequestId> | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse | undefined, Transport.TransportError> =>
  attempt(config, state.lastEventId).pipe(
    Effect.retry(retrySchedule(config.reconnect, state.retry)),
    Effect.matchEffect({
      onFailure: () =>
        pending === undefined ? Effect.undefined : lost("the response stream ended and could not be resumed"),
      onSuccess: (opened) => {
        switch (opened._tag) {
          case "Open":
            return Effect.succeed(opened.response)
          case "Closed":
            return Effect.undefined
          case "Expired":
            return Effect.as(config.expired, undefined)
          case "Refused":
            return pending === undefined
              ? Effect.undefined
              : lost(`the response stream ended and resuming it was refused (HTTP ${opened.status})`)
        }
      }
    })
  )

/**
 * Reads a stream to its end, resuming it as needed. With `pending` (a POST's
 * stream) it ends once every pending response arrived, or fails when the
 * stream ends before and cannot be resumed; without (the GET stream) it runs
 * until the server refuses it or the transport closes, and never fails.
 */
export const run: (
  config: Config,
  first: HttpClientResponse.HttpClientResponse | undefined,
  pending: Set<JsonRpc.RequestId> | undefined
) => Effect.Effect<void, Transport.TransportError> = Effect.fnUntraced(function* (
  config: Config,
  first: HttpClientResponse.HttpClientResponse | undefined,
  pending: Set<JsonRpc.RequestId> | undefined
) {
  const state: StreamState = { lastEventId: undefined, retry: undefined }
  const onEvent = (event: ReadEvent) =>
    Effect.map(config.deliver(event), (ids) => {
      if (pending !== undefined) for (const id of ids) pending.delete(id)
    })
  // The GET stream is opened at once.
  let response = first ?? (yield* connect(config, state, pending))
  while (response !== undefined && !config.isClosed()) {
    const error = yield* readBody(response, state, onEvent, config.maxEventBytes)
    if (error !== undefined) return yield* config.failed(error)
    if (pending !== undefined && pending.size === 0) return
    if (pending !== undefined && state.lastEventId === undefined) {
      return yield* lost("the response stream ended before the response, and the server offers no resumption")
    }
    // This wait is the SSE reconnection time, not a retry: nothing failed (an SSE stream ends
    // by design) and the server's `retry` names it. The waits after failed attempts, which
    // grow from it, are the retry schedule `connect` runs.
    yield* Effect.sleep(reconnectDelay(config.reconnect, state.retry))
    response = yield* connect(config, state, pending)
  }
})

/** The GET stream (`run` without pending requests), which nothing fails: only a POST's stream is `lost`. */
export const runStandalone = (config: Config): Effect.Effect<void> => Effect.orDie(run(config, undefined, undefined))
