/**
 * Reading SSE streams on the client: a POST's reply stream or the session's
 * GET stream. A stream that ends early (before every response it owes) is
 * resumed with a GET carrying `Last-Event-ID`, after the server's `retry`
 * delay or an exponential backoff; the GET stream is re-opened the same way.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Sse from "effect/encoding/Sse"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
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

export interface Reconnect {
  readonly initialMs: number
  readonly maxMs: number
  readonly factor: number
  /** Consecutive failed reconnection attempts before giving up. */
  readonly maxRetries: number
}

export interface ReadEvent {
  readonly data: string
  readonly event: string
}

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

export const isSseContent = (contentType: string | undefined): boolean =>
  contentType?.toLowerCase().startsWith(CONTENT_SSE) === true

export const isSse = (response: HttpClientResponse.HttpClientResponse): boolean =>
  isSseContent(response.headers["content-type"])

/**
 * Reads one response's events; resolves when the body ends or drops (a lost
 * connection), and with the error when an event is too large.
 */
const readBody = (
  response: HttpClientResponse.HttpClientResponse,
  state: { lastEventId: string | undefined; retryMs: number | undefined },
  onEvent: (event: ReadEvent) => Effect.Effect<void>,
  maxEventBytes: number
): Effect.Effect<Transport.TransportError | undefined> =>
  Effect.suspend(() => {
    const events: Array<ReadEvent> = []
    let oversized = false
    const parser = Sse.makeParser(
      (event) => {
        if (event._tag === "Retry") {
          state.retryMs = Duration.toMillis(event.duration)
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

const giveUp = (pending: Set<JsonRpc.RequestId>, deliver: Config["deliver"], why: string) =>
  Effect.forEach(
    [...pending],
    (id) =>
      deliver({
        event: "message",
        data: JSON.stringify(JsonRpc.failure(id, McpError.toErrorObject(new McpError.InternalError({ message: why }))))
      }),
    { discard: true }
  )

/**
 * Reads a stream to its end, resuming it as needed. With `pending` (a POST's
 * stream) it ends once every pending response arrived; without (the GET
 * stream) it runs until the server refuses it or the transport closes.
 */
export const run = (
  config: Config,
  first: HttpClientResponse.HttpClientResponse | undefined,
  pending: Set<JsonRpc.RequestId> | undefined
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const state = { lastEventId: undefined as string | undefined, retryMs: undefined as number | undefined }
    const onEvent = (event: ReadEvent) =>
      Effect.map(config.deliver(event), (ids) => {
        if (pending !== undefined) for (const id of ids) pending.delete(id)
      })
    const { initialMs, maxMs, factor, maxRetries } = config.reconnect
    let failures = 0
    let response = first
    // The GET stream is opened at once; later attempts wait.
    let connectNow = first === undefined
    while (!config.isClosed()) {
      if (response !== undefined) {
        const error = yield* readBody(response, state, onEvent, config.maxEventBytes)
        response = undefined
        if (error !== undefined) return yield* config.failed(error)
        if (pending !== undefined && pending.size === 0) return
      }
      if (pending !== undefined && state.lastEventId === undefined) {
        return yield* giveUp(pending, config.deliver, "the response stream ended and the server offers no resumption")
      }
      if (failures > maxRetries) {
        if (pending !== undefined) yield* giveUp(pending, config.deliver, "the response stream could not be resumed")
        return
      }
      if (!connectNow) {
        const base = state.retryMs ?? initialMs
        yield* Effect.sleep(Duration.millis(Math.min(maxMs, base * factor ** failures)))
        if (config.isClosed()) return
      }
      connectNow = false
      const next = yield* Effect.result(config.get(state.lastEventId))
      if (next._tag === "Failure") {
        failures++
        continue
      }
      const status = next.success.status
      if (status !== 200) yield* Effect.ignore(next.success.text)
      if (status === 404) return yield* config.expired
      // No GET stream on this server (405), or it refuses to resume this one.
      if (status === 405 || (status >= 400 && status < 500 && status !== 408 && status !== 429)) {
        if (pending !== undefined)
          yield* giveUp(pending, config.deliver, `resuming the stream was refused (HTTP ${status})`)
        return
      }
      if (status !== 200 || !isSse(next.success)) {
        failures++
        continue
      }
      failures = 0
      response = next.success
    }
  })
