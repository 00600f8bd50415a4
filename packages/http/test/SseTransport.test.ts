import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as SseClient from "@effect-mcp/http/SseClient"
import * as SseServer from "@effect-mcp/http/SseServer"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Stream from "effect/Stream"
import { clientInfo, forkIdle, runIdle } from "../../engine/test/fixtures.ts"
import { inMemoryClient, initialize, openEvents, rawPost, rawRequest, serverOptions } from "./StreamableHttpFixtures.ts"

const SSE_URL = "http://localhost/sse"

/** A legacy server behind a router, served in memory. */
const legacyServer = (options: Partial<SseServer.Options<never, SseServer.SessionServices>> = {}) =>
  Effect.gen(function* () {
    const seen: Array<HttpClientRequest.HttpClientRequest> = []
    const app = yield* HttpRouter.toHttpEffect(
      SseServer.layer({ session: ServerSession.make(serverOptions()), ...options })
    )
    return { http: inMemoryClient(app, (request) => seen.push(request)), seen }
  })

const clientSession = (transport: Transport.TransportShape, versions: ReadonlyArray<ProtocolVersion.ProtocolVersion>) =>
  ClientSession.make({ clientInfo, capabilities: {}, supportedVersions: versions }).pipe(
    Effect.provideService(Transport.Transport, transport)
  )

describe("legacy HTTP+SSE", () => {
  it.effect("the event stream announces the endpoint first", () =>
    Effect.gen(function* () {
      const { http } = yield* legacyServer()
      const response = yield* rawRequest(http, "GET", { accept: "text/event-stream" }, SSE_URL)
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers["content-type"], "text/event-stream")
      const events = yield* openEvents(response)
      const endpoint = yield* events.next
      assert.strictEqual(endpoint.event, "endpoint")
      assert.match(endpoint.data, /^\/messages\?sessionId=[0-9a-f]{32}$/)
      // A message posted there is answered on the event stream.
      const posted = yield* rawPost(http, initialize(1, "2024-11-05"), {}, `http://localhost${endpoint.data}`)
      assert.strictEqual(posted.status, 202)
      const answer = yield* events.next
      assert.strictEqual(answer.event, "message")
      assert.strictEqual(JSON.parse(answer.data).result.protocolVersion, "2024-11-05")
      yield* Fiber.interrupt(events.fiber)
    })
  )

  it.effect("POSTs to unknown or missing sessions get 404 / 400; rebinding is refused", () =>
    Effect.gen(function* () {
      const { http } = yield* legacyServer()
      assert.strictEqual(
        (yield* rawPost(http, initialize(1), {}, "http://localhost/messages?sessionId=nope")).status,
        404
      )
      assert.strictEqual((yield* rawPost(http, initialize(1), {}, "http://localhost/messages")).status, 400)
      const evil = yield* rawRequest(http, "GET", { accept: "text/event-stream", host: "evil.example.com" }, SSE_URL)
      assert.strictEqual(evil.status, 403)
    })
  )

  for (const version of ["2024-11-05", "2025-03-26", "2025-11-25"] as const) {
    it.effect(`a full session over SseClient (${version})`, () =>
      Effect.gen(function* () {
        const { http } = yield* legacyServer()
        const transport = yield* SseClient.make({ url: SSE_URL }).pipe(
          Effect.provideService(HttpClient.HttpClient, http)
        )
        assert.match(transport.endpoint, /^http:\/\/localhost\/messages\?sessionId=/)
        const session = yield* clientSession(transport, [version])
        assert.strictEqual(session.state.revision?.version, version)
        const result = yield* session.request("tools/call", { name: "echo", arguments: { text: "legacy" } })
        assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:legacy" }] })
      })
    )
  }

  it.effect("StreamableHttpClient falls back to the legacy transport when the initialize POST gets a plain 4xx", () =>
    Effect.gen(function* () {
      // A server of 2024-11-05 (it answers the stateless probe with an error, then negotiates).
      const { http, seen } = yield* legacyServer({
        session: ServerSession.make({ ...serverOptions(), supportedVersions: ["2024-11-05"] })
      })
      const transport = yield* StreamableHttpClient.make({ url: SSE_URL }).pipe(
        Effect.provideService(HttpClient.HttpClient, http)
      )
      const session = yield* clientSession(transport, ["2024-11-05", "2025-11-25", "2026-07-28"])
      assert.strictEqual(transport.mode(), "sse")
      assert.strictEqual(session.state.revision?.version, "2024-11-05")
      const result = yield* session.request("tools/call", { name: "echo", arguments: { text: "fallback" } })
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:fallback" }] })
      // The probe, refused; the initialize, refused as a 2024-11-05 server refuses it; then the event stream.
      assert.deepStrictEqual(
        seen.slice(0, 3).map((request) => request.method),
        ["POST", "POST", "GET"]
      )
    })
  )

  it.effect(
    "a Streamable HTTP server refusing the probe with a bare 400 gets initialize, not the legacy transport",
    () =>
      Effect.gen(function* () {
        const server = yield* StreamableHttpServer.make({
          session: ServerSession.make({ ...serverOptions(), supportedVersions: ["2025-11-25"] })
        })
        const served = inMemoryClient(server.handler)
        const methods: Array<string> = []
        // A server of 2025-11-25 that answers a method it does not know, before any session exists, with a
        // plain 400 (no JSON-RPC error in the body).
        const http = HttpClient.make((request) => {
          const body = request.body
          const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : ""
          methods.push(
            `${request.method} ${text === "" ? "" : ((JSON.parse(text) as { method?: string }).method ?? "")}`
          )
          if (!text.includes('"server/discover"')) return served.execute(request)
          return Effect.succeed(
            HttpClientResponse.fromWeb(
              request,
              new Response("Bad Request: missing session ID", {
                status: 400,
                headers: { "content-type": "text/plain" }
              })
            )
          )
        })
        const transport = yield* StreamableHttpClient.make({ url: "http://localhost/mcp" }).pipe(
          Effect.provideService(HttpClient.HttpClient, http)
        )
        const session = yield* clientSession(transport, ["2025-11-25", "2026-07-28"])
        // Before, the refused probe fell back to the legacy transport, whose GET the server refused: no session.
        assert.strictEqual(transport.mode(), "streamable")
        assert.strictEqual(session.state.revision?.version, "2025-11-25")
        assert.deepStrictEqual(methods.slice(0, 2), ["POST server/discover", "POST initialize"])
        const result = yield* session.request("tools/call", { name: "echo", arguments: { text: "modern" } })
        assert.deepStrictEqual(result, { content: [{ type: "text", text: "echo:modern" }] })
      })
  )

  it.effect("no fallback when disabled: the POST failure surfaces", () =>
    Effect.gen(function* () {
      const { http } = yield* legacyServer()
      const transport = yield* StreamableHttpClient.make({ url: SSE_URL, legacySseFallback: false }).pipe(
        Effect.provideService(HttpClient.HttpClient, http)
      )
      const error = yield* clientSession(transport, ["2025-11-25"]).pipe(Effect.flip)
      assert.strictEqual(error._tag, "InitializeError")
      assert.strictEqual(error.reason, "Transport")
    })
  )

  it.effect("closing the client ends the server session", () =>
    Effect.gen(function* () {
      let count = 0
      const server = yield* SseServer.make({ session: ServerSession.make(serverOptions()) })
      const app = yield* HttpRouter.toHttpEffect(
        HttpRouter.addAll([
          HttpRouter.route("GET", "/sse", server.sse),
          HttpRouter.route("POST", "/messages", server.messages)
        ])
      )
      const http = inMemoryClient(app)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const transport = yield* SseClient.make({ url: SSE_URL }).pipe(
            Effect.provideService(HttpClient.HttpClient, http)
          )
          yield* clientSession(transport, ["2024-11-05"])
          count = server.sessionCount()
        })
      )
      assert.strictEqual(count, 1)
      assert.strictEqual(server.sessionCount(), 0)
    })
  )

  /** A legacy server whose event stream carries `events` after the endpoint, then ends. */
  const finiteStream = (events: string) =>
    inMemoryClient(
      Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        request.method === "GET"
          ? HttpServerResponse.text(`event: endpoint\ndata: /messages\n\n${events}`, {
              contentType: "text/event-stream"
            })
          : HttpServerResponse.empty({ status: 202 })
      )
    )

  it.effect("once the event stream ended, SseClient.send fails with Closed", () =>
    Effect.gen(function* () {
      const transport = yield* SseClient.make({ url: SSE_URL }).pipe(
        Effect.provideService(HttpClient.HttpClient, finiteStream(""))
      )
      yield* Stream.runDrain(transport.incoming)
      const error = yield* transport.send(JsonRpc.notification("late")).pipe(Effect.flip)
      assert.strictEqual(error.reason, "Closed")
    })
  )

  it.effect("an event over maxEventBytes fails incoming with FrameTooLarge instead of ending it", () =>
    Effect.gen(function* () {
      const transport = yield* SseClient.make({ url: SSE_URL, maxEventBytes: 64 }).pipe(
        Effect.provideService(HttpClient.HttpClient, finiteStream(`event: message\ndata: ${"x".repeat(200)}\n\n`))
      )
      const error = yield* Stream.runDrain(transport.incoming).pipe(Effect.flip)
      assert.strictEqual(error.reason, "FrameTooLarge")
      const later = yield* transport.send(JsonRpc.notification("late")).pipe(Effect.flip)
      assert.strictEqual(later.reason, "Closed")
    })
  )
})

describe("legacy HTTP+SSE server send", () => {
  /** An SseServer whose session hands its transport out instead of running an MCP session. */
  const captured = (maxBufferedMessages: number) =>
    Effect.gen(function* () {
      const transports: Array<Transport.TransportShape> = []
      const server = yield* SseServer.make({
        maxBufferedMessages,
        session: Effect.flatMap(Transport.Transport, (transport) => {
          transports.push(transport)
          return Effect.never
        })
      })
      const app = yield* HttpRouter.toHttpEffect(
        HttpRouter.addAll([
          HttpRouter.route("GET", "/sse", server.sse),
          HttpRouter.route("POST", "/messages", server.messages)
        ])
      )
      // Returns once the session the stream opened has come to rest, its transport captured.
      const response = yield* runIdle(rawRequest(inMemoryClient(app), "GET", { accept: "text/event-stream" }, SSE_URL))
      assert.strictEqual(transports.length, 1)
      return { response, transport: transports[0]!, server }
    })

  it.effect("send suspends while the event stream's buffer is full, and an interrupted send leaves it usable", () =>
    Effect.gen(function* () {
      const { response, transport } = yield* captured(2)
      yield* transport.send(JsonRpc.notification("one"))
      yield* transport.send(JsonRpc.notification("two"))
      // Returns once the send has come to rest: waiting for room, or done.
      const blocked = yield* forkIdle(transport.send(JsonRpc.notification("blocked")))
      assert.isUndefined(blocked.pollUnsafe(), "send did not wait for room")
      yield* Fiber.interrupt(blocked)
      const events = yield* openEvents(response)
      assert.strictEqual((yield* events.next).event, "endpoint")
      assert.strictEqual(JSON.parse((yield* events.next).data).method, "one")
      assert.strictEqual(JSON.parse((yield* events.next).data).method, "two")
      yield* transport.send(JsonRpc.notification("after"))
      assert.strictEqual(JSON.parse((yield* events.next).data).method, "after")
      yield* Fiber.interrupt(events.fiber)
    })
  )

  it.effect("once the client left, send fails with Closed", () =>
    Effect.gen(function* () {
      const { response, transport, server } = yield* captured(16)
      const events = yield* openEvents(response)
      assert.strictEqual((yield* events.next).event, "endpoint")
      yield* Fiber.interrupt(events.fiber)
      assert.strictEqual(server.sessionCount(), 0)
      const exit = yield* Effect.exit(transport.send(JsonRpc.notification("late")))
      assert.isTrue(
        Exit.isFailure(exit) && exit.cause.reasons.some((r) => r._tag === "Fail" && r.error.reason === "Closed"),
        "a send after the client left must fail with Closed"
      )
    })
  )
})
