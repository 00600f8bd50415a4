import { assert, describe, it } from "@effect/vitest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Effect from "effect/Effect"
import { inMemoryClient, openSession, rawPost, serverOptions } from "./StreamableHttpFixtures.ts"

describe("Streamable HTTP: idle sessions", () => {
  for (const responseMode of ["json", "sse"] as const) {
    it.effect(`an idle session has no reader waiting on its input, and serves what arrives (${responseMode})`, () =>
      Effect.gen(function* () {
        let reads = 0
        let attached = 0
        // The session's transport, seen through a view that counts reads of `incoming`.
        const session = Effect.gen(function* () {
          const transport = yield* Transport.Transport
          const view: Transport.TransportShape = {
            get incoming() {
              reads++
              return transport.incoming
            },
            send: transport.send,
            attach: (receiver) => {
              const pushed = transport.attach?.(receiver) === true
              if (pushed) attached++
              return pushed
            }
          }
          return yield* ServerSession.make(serverOptions()).pipe(Effect.provideService(Transport.Transport, view))
        })
        const server = yield* StreamableHttpServer.make({ session, responseMode })
        const http = inMemoryClient(server.handler)
        const ids = [yield* openSession(http), yield* openSession(http)]
        assert.strictEqual(server.sessionCount(), 2)
        assert.strictEqual(attached, 2)
        assert.strictEqual(reads, 0)
        const headers = { "mcp-session-id": ids[0]!, "mcp-protocol-version": "2025-11-25" }
        const ping = yield* rawPost(http, { jsonrpc: "2.0", id: 7, method: "ping" }, headers)
        assert.strictEqual(ping.status, 200)
        assert.include(ping.text, '"id":7')
        assert.strictEqual(reads, 0)
      })
    )
  }
})
