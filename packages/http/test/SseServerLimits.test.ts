/**
 * The legacy HTTP+SSE server under the attacks of issue 12: one client that
 * never reads must not hold the server's senders (item 7), and one client
 * cannot take every session (item 9).
 */
import { assert, describe, it } from "@effect/vitest"
import * as SseServer from "@effect-mcp/http/SseServer"
import * as Transport from "@effect-mcp/engine/Transport"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Queue from "effect/Queue"
import { TestClock } from "effect/testing"
import { forkIdle } from "../../engine/test/fixtures.ts"
import { inMemoryClient, rawRequest } from "./StreamableHttpFixtures.ts"

const SSE_URL = "http://localhost/sse"

/** An SseServer whose sessions hand their transport out instead of running an MCP session. */
const make = (options: Partial<SseServer.Options<never, Transport.Transport>>) =>
  Effect.gen(function* () {
    // Each session hands its transport over here once it runs.
    const transports = yield* Queue.unbounded<Transport.TransportShape>()
    const server = yield* SseServer.make({
      ...options,
      session: Effect.flatMap(Transport.Transport, (transport) =>
        Effect.andThen(Queue.offer(transports, transport), Effect.never)
      )
    })
    const app = yield* HttpRouter.toHttpEffect(HttpRouter.addAll([HttpRouter.route("GET", "/sse", server.sse)]))
    const open = (headers: Record<string, string> = {}) =>
      rawRequest(inMemoryClient(app), "GET", { accept: "text/event-stream", ...headers }, SSE_URL)
    return { server, transports, open }
  })

describe("legacy HTTP+SSE server: a client that never reads", () => {
  it.effect("list_changed to an unread stream is coalesced; a stream stalled past writeTimeout is closed", () =>
    Effect.gen(function* () {
      const { server, transports, open } = yield* make({ maxBufferedMessages: 2, writeTimeout: "10 seconds" })
      yield* open()
      const transport = yield* Queue.take(transports)
      // The endpoint event, one list_changed and one message fill the buffer (2 + the endpoint);
      // the same list_changed again is dropped.
      const floods = Effect.forEach(
        Array.from({ length: 1000 }),
        () => transport.send(JsonRpc.notification("notifications/tools/list_changed")),
        { discard: true }
      )
      // Nobody reads and the clock stands still: a list_changed that waited would hang here.
      yield* floods
      yield* transport.send(JsonRpc.notification("notifications/message"))
      const blocked = yield* forkIdle(transport.send(JsonRpc.notification("notifications/message")))
      assert.isUndefined(blocked.pollUnsafe(), "a send on a full stream waits for the reader")
      // Returns once the woken write timeout, and all it set going, has come to rest.
      yield* TestClock.adjust("16 seconds")
      assert.strictEqual(server.evictedConnections(), 1)
      assert.strictEqual(server.sessionCount(), 0)
      const exit = yield* Effect.exit(transport.send(JsonRpc.notification("notifications/message")))
      assert.isTrue(exit._tag === "Failure", "the closed session's sends fail")
    })
  )
})

describe("legacy HTTP+SSE server: sessions per client", () => {
  it.effect("one client holds at most maxSessionsPerClient streams (429 beyond); others still get theirs", () =>
    Effect.gen(function* () {
      const { server, open } = yield* make({ maxSessionsPerClient: 2, clientOf: (r) => r.headers["x-client"] })
      assert.strictEqual((yield* open({ "x-client": "mallory" })).status, 200)
      assert.strictEqual((yield* open({ "x-client": "mallory" })).status, 200)
      assert.strictEqual((yield* open({ "x-client": "mallory" })).status, 429)
      assert.strictEqual((yield* open({ "x-client": "alice" })).status, 200)
      assert.strictEqual(server.sessionCount(), 3)
    })
  )
})
