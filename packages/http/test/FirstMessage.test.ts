/**
 * The client's first message (2025-03-26 and later: initialization MUST be
 * the first interaction). A client speaking 2026-07-28 opens with
 * `server/discover`, but never where no 2026-07-28 server can be: over the
 * legacy HTTP+SSE transport (SseClient, and a Streamable HTTP client that
 * fell back to it) and whenever its revisions exclude 2026-07-28, the first
 * message the server gets is `initialize`. Servers run in memory.
 */
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
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpRouter from "effect/http/HttpRouter"
import { inMemoryClient, serverOptions } from "./StreamableHttpFixtures.ts"

const clientInfo = { name: "first-message-client", version: "1.0.0" }

/** The methods of the requests and notifications POSTed to `path`, in order. */
const recorder = (path: string) => {
  const methods: Array<string> = []
  const record = (request: HttpClientRequest.HttpClientRequest) => {
    const body = request.body
    if (request.method !== "POST" || !request.url.includes(path) || body._tag !== "Uint8Array") return
    const decoded = JSON.parse(new TextDecoder().decode(body.body)) as { readonly method?: string }
    if (decoded.method !== undefined) methods.push(decoded.method)
  }
  return { methods, record }
}

/** A legacy HTTP+SSE server of 2024-11-05 to 2025-11-25 in memory (GET /sse, POST /messages). */
const legacyServer = (record: (request: HttpClientRequest.HttpClientRequest) => void) =>
  Effect.map(
    HttpRouter.toHttpEffect(
      SseServer.layer({
        session: ServerSession.make({
          ...serverOptions(),
          supportedVersions: ["2024-11-05", "2025-03-26", "2025-11-25"]
        })
      })
    ),
    (app) => inMemoryClient(app, record)
  )

const handshake = (transport: Transport.TransportShape, versions?: ReadonlyArray<ProtocolVersion.ProtocolVersion>) =>
  ClientSession.make({ clientInfo, capabilities: {}, supportedVersions: versions }).pipe(
    Effect.provideService(Transport.Transport, transport)
  )

describe("the client's first message", () => {
  it.effect("over SseClient it is initialize, though the client speaks 2026-07-28", () =>
    Effect.gen(function* () {
      const { methods, record } = recorder("/messages")
      const http = yield* legacyServer(record)
      const transport = yield* SseClient.make({ url: "http://localhost/sse" }).pipe(
        Effect.provideService(HttpClient.HttpClient, http)
      )
      assert.isFalse(transport.carriesStateless?.() ?? true)
      const session = yield* handshake(transport)
      assert.strictEqual(session.state.revision?.version, "2025-11-25")
      assert.deepStrictEqual(methods, ["initialize", "notifications/initialized"])
    })
  )

  it.effect(
    "after StreamableHttpClient fell back to legacy HTTP+SSE the probe is not sent there: initialize goes first",
    () =>
      Effect.gen(function* () {
        const { methods, record } = recorder("/messages")
        const http = yield* legacyServer(record)
        // The POST of the probe to /sse gets a plain 405: the transport falls back.
        const transport = yield* StreamableHttpClient.make({ url: "http://localhost/sse" }).pipe(
          Effect.provideService(HttpClient.HttpClient, http)
        )
        assert.isTrue(transport.carriesStateless?.() ?? true)
        const session = yield* handshake(transport, ["2025-03-26", "2025-11-25", "2026-07-28"])
        assert.strictEqual(transport.mode(), "sse")
        assert.isFalse(transport.carriesStateless?.() ?? true)
        assert.strictEqual(session.state.revision?.version, "2025-11-25")
        assert.deepStrictEqual(methods, ["initialize", "notifications/initialized"])
      })
  )

  it.effect("over Streamable HTTP with revisions that exclude 2026-07-28 it is initialize", () =>
    Effect.gen(function* () {
      const { methods, record } = recorder("/mcp")
      const server = yield* StreamableHttpServer.make({ session: ServerSession.make(serverOptions()) })
      const transport = yield* StreamableHttpClient.make({ url: "http://localhost/mcp" }).pipe(
        Effect.provideService(HttpClient.HttpClient, inMemoryClient(server.handler, record))
      )
      const session = yield* handshake(transport, ["2025-03-26", "2025-06-18", "2025-11-25"])
      assert.strictEqual(session.state.revision?.version, "2025-11-25")
      assert.deepStrictEqual(methods, ["initialize", "notifications/initialized"])
    })
  )
})
