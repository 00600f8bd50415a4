/**
 * The client side of the 2024-11-05 HTTP+SSE transport: a GET opens the
 * event stream, whose first `endpoint` event names the URL to POST messages
 * to; every server message arrives as a `message` event on that one stream.
 */
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Sse from "effect/encoding/Sse"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Transport from "@effect-mcp/engine/Transport"
import { io, isSse, tooLarge } from "./httpClientSse.ts"
import * as NetCause from "@effect-mcp/engine/NetCause"

export { defaultMaxEventBytes } from "./httpClientSse.ts"
import { CONTENT_JSON, CONTENT_SSE } from "./httpWire.ts"

// The package compiles without DOM or Node typings; the global is the platform's own.
declare const URL: new (url: string, base?: string) => { readonly href: string; readonly origin: string }

export interface Options {
  readonly http: HttpClient.HttpClient
  readonly url: string
  readonly headers: () => Record<string, string>
  /** Receives the data of every `message` event. */
  readonly deliver: (data: string) => Effect.Effect<void>
  /** Bound of one event's pending text (characters). */
  readonly maxEventBytes: number
  /**
   * The event stream is over: it ended or dropped (no error), or it carried
   * an event over `maxEventBytes` (the error).
   */
  readonly onEnd: (error: Transport.TransportError | undefined) => Effect.Effect<void>
}

export interface Connection {
  /** Where messages are posted, as announced by the server. */
  readonly endpoint: string
  readonly post: (frame: Transport.Outgoing) => Effect.Effect<void, Transport.TransportError>
}

const closedError = new Transport.TransportError({ reason: "Closed", message: "the event stream has ended" })

/** Resolves an announced endpoint; it must stay on the event stream's origin (the spec's security rule). */
const resolveEndpoint = (data: string, base: string): string | Transport.TransportError => {
  try {
    const url = new URL(data.trim(), base)
    if (url.origin !== new URL(base).origin) {
      return new Transport.TransportError({ reason: "Protocol", message: `endpoint ${url.href} is on another origin` })
    }
    return url.href
  } catch (cause) {
    return new Transport.TransportError({ reason: "Protocol", message: `invalid endpoint event: ${data}`, cause })
  }
}

/** Opens the event stream and waits for the endpoint; the reader lives in the current scope. */
export const connect = (options: Options): Effect.Effect<Connection, Transport.TransportError, Scope.Scope> =>
  Effect.gen(function* () {
    const response = yield* options.http
      .execute(
        HttpClientRequest.get(options.url).pipe(
          HttpClientRequest.setHeaders({ ...options.headers(), accept: CONTENT_SSE })
        )
      )
      .pipe(Effect.mapError((cause) => io(`GET ${options.url} failed: ${NetCause.describe(cause)}`, cause)))
    if (response.status !== 200 || !isSse(response)) {
      return yield* io(`GET ${options.url} did not open an event stream (HTTP ${response.status})`)
    }
    const endpoint = yield* Deferred.make<string, Transport.TransportError>()
    const messages: Array<string> = []
    // Set before `onEnd` runs, so whoever saw the end also sees posts refused.
    let ended: Transport.TransportError | undefined
    let oversize = false
    const parser = Sse.makeParser(
      (event) => {
        if (event._tag === "Retry") return
        // The parser bounds only an event split across chunks; one within a chunk is checked here.
        if (event.data.length > options.maxEventBytes) {
          oversize = true
          return
        }
        if (event.event === "endpoint") {
          const resolved = resolveEndpoint(event.data, options.url)
          Deferred.doneUnsafe(endpoint, typeof resolved === "string" ? Effect.succeed(resolved) : Effect.fail(resolved))
        } else if (event.event === "message") {
          messages.push(event.data)
        }
      },
      { maxEventSize: options.maxEventBytes }
    )
    const oversized = tooLarge(options.maxEventBytes)
    yield* response.stream.pipe(
      Stream.decodeText,
      Stream.runForEach((chunk) =>
        Effect.suspend(() => {
          const error = parser.feed(chunk)
          if (error !== undefined || oversize) return Effect.fail(oversized)
          return Effect.forEach(messages.splice(0, messages.length), options.deliver, { discard: true })
        })
      ),
      // A dropped connection ends the stream like a clean end; an oversized event is an error.
      Effect.matchEffect({
        onFailure: (error) => Effect.succeed(error === oversized ? oversized : undefined),
        onSuccess: () => Effect.succeed(undefined)
      }),
      Effect.tap((error) =>
        Effect.suspend(() => {
          ended = error ?? closedError
          return Deferred.fail(endpoint, error ?? io("the event stream ended before announcing an endpoint"))
        })
      ),
      Effect.flatMap(options.onEnd),
      Effect.forkScoped
    )
    const url = yield* Deferred.await(endpoint)
    return {
      endpoint: url,
      post: (frame) =>
        Effect.suspend(() =>
          ended !== undefined
            ? Effect.fail(closedError)
            : options.http
                .execute(
                  HttpClientRequest.post(url).pipe(
                    HttpClientRequest.setHeaders(options.headers()),
                    HttpClientRequest.bodyText(JsonRpcCodec.encode(frame), CONTENT_JSON)
                  )
                )
                .pipe(
                  Effect.mapError((cause) => io(`POST ${url} failed: ${NetCause.describe(cause)}`, cause)),
                  Effect.flatMap((reply) =>
                    Effect.andThen(
                      Effect.ignore(reply.text),
                      reply.status >= 200 && reply.status < 300
                        ? Effect.void
                        : Effect.fail(io(`POST ${url} was refused (HTTP ${reply.status})`))
                    )
                  )
                )
        )
    }
  })
