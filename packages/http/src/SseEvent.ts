/**
 * Server-Sent Events as the MCP HTTP transports frame them: the text of one
 * event (what the servers write), and the events a text holds (what a reader
 * of a relayed stream sees). Public so that code relaying these streams (the
 * cluster's forwarding) frames and reads them exactly as the transports do,
 * instead of by hand.
 *
 * Reading is effect's SSE parser (`effect/encoding/Sse`), the one the HTTP
 * clients read with: it joins lines split between chunks and dispatches an
 * event at its blank line.
 */
import * as Duration from "effect/Duration"
import * as Sse from "effect/encoding/Sse"

/** One event: its `data`, and the optional `event` name, `id` and `retry` delay (milliseconds). */
export interface SseEvent {
  readonly id?: string | undefined
  readonly event?: string | undefined
  readonly data: string
  readonly retryMs?: number | undefined
}

/**
 * The text of one event block, ended by its blank line. A line break in
 * `data` starts another `data:` line; JSON-RPC text never holds a raw one
 * (the codec escapes them).
 */
export const format = (event: SseEvent): string => {
  let text = ""
  if (event.event !== undefined) text += `event: ${event.event}\n`
  if (event.id !== undefined) text += `id: ${event.id}\n`
  if (event.retryMs !== undefined) text += `retry: ${Math.max(0, Math.floor(event.retryMs))}\n`
  return text + `data: ${event.data.replace(/\r\n|\r|\n/g, "\ndata: ")}\n\n`
}

/** A parser fed an event stream's text chunk by chunk (see `makeParser`). */
export interface Parser {
  /** Parses one more chunk; fails when an event grows past `maxEventSize`. */
  readonly feed: (chunk: string) => Sse.SseError | undefined
}

/** Settings of a parser. */
export interface ParserOptions {
  /** Largest pending event, in characters. Default effect's (10 MiB). */
  readonly maxEventSize?: number | undefined
}

/**
 * A parser calling `onEvent` with each complete event of the text it is fed
 * (its `event` name defaults to `message`). A `retry` line is reported on its
 * own, as an event with `retryMs` and empty `data`; an event without data is
 * not dispatched unless a `data:` line (even empty) was given.
 */
export const makeParser = (onEvent: (event: SseEvent) => void, options?: ParserOptions): Parser =>
  Sse.makeParser(
    (event) =>
      onEvent(
        event._tag === "Retry"
          ? { data: "", retryMs: Duration.toMillis(event.duration) }
          : { id: event.id, event: event.event, data: event.data }
      ),
    options
  )

/** The complete events of a text (an event not ended by its blank line is left out). */
export const parse = (text: string): Array<SseEvent> => {
  const events: Array<SseEvent> = []
  makeParser((event) => events.push(event), { maxEventSize: Number.MAX_SAFE_INTEGER }).feed(text)
  return events
}
