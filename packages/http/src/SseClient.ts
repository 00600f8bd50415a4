/**
 * The 2024-11-05 HTTP+SSE transport, client side: opens the event stream at
 * `url`, waits for the `endpoint` event, then posts every frame there.
 * StreamableHttpClient falls back to the same code by itself; use this
 * module to talk to a legacy server directly.
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Legacy from "./internal/sseLegacyClient.ts"
import * as Transport from "@effect-mcp/engine/Transport"

/** Settings of the legacy HTTP+SSE client transport. */
export interface Options {
  /** The event stream's URL (e.g. `http://127.0.0.1:3000/sse`). */
  readonly url: string
  /** Sent with every request (e.g. `authorization`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Frames buffered before the reader waits for the session. Default 1,024. */
  readonly capacity?: number | undefined
  /** Largest SSE event accepted (characters); a larger one fails `incoming` with `FrameTooLarge`. Default 64 MiB. */
  readonly maxEventBytes?: number | undefined
}

/** The legacy HTTP+SSE client transport: a Transport plus the endpoint the server announced. */
export interface SseClientShape extends Transport.TransportShape {
  /** The URL the server announced for posting messages. */
  readonly endpoint: string
}

const closedError = new Transport.TransportError({ reason: "Closed", message: "SSE transport closed" })

/**
 * Connects; fails when the server opens no event stream or announces no
 * endpoint. Once the event stream ended, `send` fails with `Closed`.
 */
export const make = (
  options: Options
): Effect.Effect<SseClientShape, Transport.TransportError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    const http = yield* HttpClient.HttpClient
    const incoming = yield* Queue.bounded<Transport.Incoming, Transport.TransportError | Cause.Done>(
      options.capacity ?? 1024
    )
    let closed = false
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return Queue.end(incoming)
      })
    )
    const connection = yield* Legacy.connect({
      http,
      url: options.url,
      headers: () => ({ ...options.headers }),
      deliver: (data) => Effect.asVoid(Queue.offer(incoming, JsonRpcCodec.decode(data))),
      maxEventBytes: options.maxEventBytes ?? Legacy.defaultMaxEventBytes,
      onEnd: (error) => Effect.asVoid(error === undefined ? Queue.end(incoming) : Queue.fail(incoming, error))
    })
    return {
      endpoint: connection.endpoint,
      incoming: Stream.fromQueue(incoming),
      send: (frame) => Effect.suspend(() => (closed ? Effect.fail(closedError) : connection.post(frame))),
      // No 2026-07-28 server speaks this transport: a client opens with `initialize`, never `server/discover`.
      carriesStateless: () => false
    } satisfies SseClientShape
  })

/** Provides `Transport` over the legacy HTTP+SSE transport (2024-11-05), using the `HttpClient` in context. */
export const layer = (
  options: Options
): Layer.Layer<Transport.Transport, Transport.TransportError, HttpClient.HttpClient> =>
  Layer.effect(Transport.Transport, make(options))
