import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import type * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Sse from "effect/encoding/Sse"
import * as Exit from "effect/Exit"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { serverInfo } from "../../engine/test/fixtures.ts"

export const URL_MCP = "http://localhost/mcp"

/**
 * An HttpClient served in memory by an HTTP app, with what a real HTTP stack
 * adds on the way: Host, Content-Type and Content-Length headers. A streamed
 * body keeps the request's scope open until the client stops reading it.
 */
export const inMemoryClient = (
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest | Scope.Scope>,
  onRequest?: (request: HttpClientRequest.HttpClientRequest) => void
): HttpClient.HttpClient =>
  HttpClient.make((request, url) =>
    Effect.gen(function* () {
      let sent = request
      if (sent.headers["host"] === undefined) sent = HttpClientRequest.setHeader(sent, "host", url.host)
      const body = sent.body
      if (body._tag !== "Empty" && body.contentType !== undefined && sent.headers["content-type"] === undefined) {
        sent = HttpClientRequest.setHeader(sent, "content-type", body.contentType)
      }
      if (body._tag !== "Empty" && body.contentLength !== undefined) {
        sent = HttpClientRequest.setHeader(sent, "content-length", String(body.contentLength))
      }
      onRequest?.(sent)
      const scope = yield* Scope.make()
      let response = yield* app.pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromClientRequest(sent)),
        Scope.provide(scope),
        Effect.catchCause((cause) => Effect.map(HttpServerError.causeResponse(cause), ([r]) => r))
      )
      const out = response.body
      if (out._tag !== "Empty" && out.contentType !== undefined && response.headers["content-type"] === undefined) {
        response = HttpServerResponse.setHeader(response, "content-type", out.contentType)
      }
      if (out._tag === "Stream") {
        response = HttpServerResponse.setBody(
          response,
          HttpBody.stream(Stream.ensuring(out.stream, Scope.close(scope, Exit.void)), out.contentType)
        )
      } else {
        yield* Scope.close(scope, Exit.void)
      }
      return HttpServerResponse.toClientResponse(response, { request: sent })
    })
  )

export const tools: Session.Handler = (params) =>
  Effect.gen(function* () {
    const p = params as { readonly name: string; readonly arguments?: { readonly text?: string; readonly n?: number } }
    if (p.name === "progress") {
      const current = yield* CurrentRequest.CurrentRequest
      for (let i = 1; i <= 3; i++) yield* current.progress({ progress: i, total: 3 })
    }
    if (p.name === "never") return yield* Effect.never
    return { content: [{ type: "text", text: `${p.name}:${p.arguments?.text ?? ""}` }] }
  })

export const serverOptions = (handlers: ReadonlyMap<string, Session.Handler> = new Map([["tools/call", tools]])) => ({
  serverInfo,
  capabilities: { tools: {} },
  handlers
})

/** A Streamable HTTP server in the test scope, served in memory. */
export const serve = (
  options: Partial<StreamableHttpServer.Options<never, never>> & {
    readonly server?: Partial<ServerSession.Options> | undefined
  } = {}
) =>
  Effect.gen(function* () {
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make({ ...serverOptions(), ...options.server }),
      ...options
    })
    return { server, http: inMemoryClient(server.handler) }
  })

export interface Reply {
  readonly status: number
  readonly headers: { readonly [key: string]: string | undefined }
  readonly text: string
  readonly response: HttpClientResponse.HttpClientResponse
}

const reply = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(
    Effect.orDie(response.text),
    (text): Reply => ({ status: response.status, headers: response.headers, text, response })
  )

export const postHeaders = { accept: "application/json, text/event-stream", "content-type": "application/json" }

/** POSTs raw JSON and reads the whole reply (an SSE reply is read until the server ends it). */
export const rawPost = (
  http: HttpClient.HttpClient,
  body: unknown,
  headers: Record<string, string> = {},
  url = URL_MCP
) =>
  Effect.flatMap(
    Effect.orDie(
      http.execute(
        HttpClientRequest.post(url).pipe(
          HttpClientRequest.bodyText(
            typeof body === "string" ? body : JSON.stringify(body),
            headers["content-type"] ?? postHeaders["content-type"]
          ),
          HttpClientRequest.setHeaders({ ...postHeaders, ...headers })
        )
      )
    ),
    reply
  )

export const rawRequest = (
  http: HttpClient.HttpClient,
  method: "GET" | "DELETE" | "PUT",
  headers: Record<string, string>,
  url = URL_MCP
) => Effect.orDie(http.execute(HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(headers))))

export const readAll = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(Effect.succeed(response), reply)

/** The JSON data of every SSE event with data in a text. */
export const sseData = (text: string): Array<unknown> =>
  text
    .split("\n\n")
    .map((block) =>
      block
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n")
    )
    .filter((data) => data !== "")
    .map((data) => JSON.parse(data))

export const initialize = (id: JsonRpc.RequestId, version = "2025-11-25") => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

/** Initializes a session with raw requests; returns its id. */
export const openSession = (http: HttpClient.HttpClient, version = "2025-11-25") =>
  Effect.gen(function* () {
    const init = yield* rawPost(http, initialize(1, version))
    const id = init.headers["mcp-session-id"]
    if (init.status !== 200 || id === undefined)
      return yield* Effect.die(`initialize failed: ${init.status} ${init.text}`)
    const notified = yield* rawPost(
      http,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { "mcp-session-id": id, "mcp-protocol-version": version }
    )
    if (notified.status !== 202) return yield* Effect.die(`initialized failed: ${notified.status}`)
    return id
  })

export interface ReadEvent {
  readonly id: string | undefined
  readonly event: string
  readonly data: string
  /** The `retry` received with this event, if any. */
  readonly retryMs: number | undefined
}

/** Reads an SSE reply event by event in a child fiber; interrupting `fiber` drops the connection. */
export const openEvents = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<ReadEvent, Cause.Done>()
    let retryMs: number | undefined
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Retry") {
        retryMs = Duration.toMillis(event.duration)
        return
      }
      Queue.offerUnsafe(queue, { id: event.id, event: event.event, data: event.data, retryMs })
      retryMs = undefined
    })
    const fiber = yield* response.stream.pipe(
      Stream.decodeText,
      Stream.runForEach((chunk) => Effect.sync(() => parser.feed(chunk))),
      Effect.ignore,
      Effect.ensuring(Queue.end(queue)),
      Effect.forkChild
    )
    return { next: Queue.take(queue), rest: Queue.collect(queue), fiber }
  })
