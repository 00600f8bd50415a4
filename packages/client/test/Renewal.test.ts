/**
 * A server that ends every new session at once is not met with a new
 * `initialize` as fast as the two can go: after a session that lived less
 * than a second, the next starts after 250 ms, doubling up to 5 s. The server
 * is the engine's own Streamable HTTP server, in memory, behind an HttpClient
 * that answers the event stream's GET with 404 (as a server without a GET
 * route does): each 404 expires the session. Live time, waiting for each
 * `initialize` to arrive: the gaps between them are what is checked.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as Transport from "@effect-mcp/engine/Transport"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Queue from "effect/Queue"
import { inMemoryClient, serverOptions, tools } from "../../http/test/StreamableHttpFixtures.ts"
import * as Connection from "../src/internal/connection.ts"

describe("renewing an ended session", () => {
  it("waits longer after each session that lived less than a second, up to 5 s", () => {
    const waits = [0, 1, 2, 3, 4, 5, 6, 7].map((quick) => Duration.toMillis(Connection.renewalDelay(quick)))
    assert.deepStrictEqual(waits, [0, 250, 500, 1000, 2000, 4000, 5000, 5000])
  })

  it.live(
    "a server that answers the event stream's GET with 404 gets each new initialize later than the last",
    () =>
      Effect.gen(function* () {
        const server = yield* StreamableHttpServer.make({
          session: ServerSession.make({ ...serverOptions(new Map([["tools/call", tools]])), capabilities: {} })
        })
        const served = inMemoryClient(server.handler)
        const initializes = yield* Queue.unbounded<number>()
        const http = HttpClient.make((request) => {
          if (request.method === "GET") {
            return Effect.succeed(HttpClientResponse.fromWeb(request, new Response(null, { status: 404 })))
          }
          const body = request.body
          if (body._tag === "Uint8Array" && new TextDecoder().decode(body.body).includes('"initialize"')) {
            Queue.offerUnsafe(initializes, Date.now())
          }
          return served.execute(request)
        })
        const transport = yield* StreamableHttpClient.make({ url: "http://localhost/mcp" }).pipe(
          Effect.provideService(HttpClient.HttpClient, http)
        )
        yield* McpClient.make({ clientInfo: { name: "c", version: "1" }, supportedVersions: ["2025-11-25"] }).pipe(
          Effect.provideService(Transport.Transport, transport)
        )
        const at: Array<number> = []
        for (let i = 0; i < 4; i++) at.push(yield* Queue.take(initializes))
        // Before, the four came within a few milliseconds, and went on as fast (about 900 a second).
        assert.isAtLeast(at[1]! - at[0]!, 245)
        assert.isAtLeast(at[2]! - at[1]!, 495)
        assert.isAtLeast(at[3]! - at[2]!, 995)
      }).pipe(Effect.scoped),
    30_000
  )
})
