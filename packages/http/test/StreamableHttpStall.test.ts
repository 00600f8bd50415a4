/**
 * One client that never reads its GET stream must not stall the others
 * (found under attack, item 7: a full 1,024-event buffer waited with no
 * timeout, and every broadcast behind it hung). Idempotent notifications are
 * coalesced per stream and never wait; a connection whose reader takes
 * nothing for the write timeout is closed, counted, and resumable.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import { TestClock } from "effect/testing"
import { forkIdle } from "../../engine/test/fixtures.ts"
import { inMemoryClient, openEvents, openSession, rawRequest, serverOptions } from "./StreamableHttpFixtures.ts"

const session = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" })

const make = Effect.gen(function* () {
  const sessions: Array<Session.SessionShape> = []
  const server = yield* StreamableHttpServer.make({
    session: ServerSession.make(serverOptions()).pipe(Effect.tap((s) => Effect.sync(() => sessions.push(s)))),
    maxBufferedMessages: 2,
    writeTimeout: "10 seconds",
    keepaliveInterval: "1 hour"
  })
  return { server, sessions, http: inMemoryClient(server.handler) }
})

describe("Streamable HTTP: a client that never reads", () => {
  it.effect("list_changed and resources/updated to an unread stream are coalesced and never wait", () =>
    Effect.gen(function* () {
      const { server, sessions, http } = yield* make
      const id = yield* openSession(http)
      // Opened, never read.
      yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" })
      const peer = sessions[0]!.peer
      const broadcasts = Effect.gen(function* () {
        for (let i = 0; i < 1000; i++) {
          yield* peer.notify("notifications/tools/list_changed", {})
          yield* peer.notify("notifications/resources/updated", { uri: `file:///${i % 3}` })
          yield* peer.notify("notifications/prompts/list_changed", {})
        }
      })
      // Nobody reads and the clock stands still: a broadcast that waited would hang here.
      yield* broadcasts
      // The buffer (2) holds the priming event and one notification; the rest wait once each, or are dropped.
      assert.isAbove(server.stats().coalescedNotifications, 2990)
      assert.strictEqual(server.stats().evictedConnections, 0)
    })
  )

  it.effect("a stream that stays full past the write timeout is closed and counted; the client resumes it", () =>
    Effect.gen(function* () {
      const { server, sessions, http } = yield* make
      const id = yield* openSession(http)
      const first = yield* openEvents(yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream" }))
      const priming = yield* first.next
      // The reader stops; the buffer fills behind it.
      yield* Fiber.interrupt(first.fiber)
      yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream", "last-event-id": priming.id! })
      const notify = (data: string) => sessions[0]!.peer.notify("notifications/message", { level: "info", data })
      yield* notify("a")
      yield* notify("b")
      const blocked = yield* forkIdle(notify("c"))
      assert.isUndefined(blocked.pollUnsafe(), "a send on a full stream waits for the reader")
      const before = yield* Metric.value(StreamableHttpServer.evictedConnections)
      yield* TestClock.adjust("9 seconds")
      assert.isUndefined(blocked.pollUnsafe(), "within the write timeout the send still waits")
      // Returns once the woken write timeout, and all it set going, has come to rest.
      yield* TestClock.adjust("6 seconds")
      assert.isDefined(blocked.pollUnsafe(), "past the write timeout the stalled connection was closed")
      yield* Fiber.join(blocked)
      assert.strictEqual(server.stats().evictedConnections, 1)
      assert.strictEqual((yield* Metric.value(StreamableHttpServer.evictedConnections)).count - before.count, 1)
      // Nothing was lost: resuming after the priming event replays a, b and c.
      const resumed = yield* openEvents(
        yield* rawRequest(http, "GET", { ...session(id), accept: "text/event-stream", "last-event-id": priming.id! })
      )
      const data = [yield* resumed.next, yield* resumed.next, yield* resumed.next].map((e) => JSON.parse(e.data))
      assert.deepStrictEqual(
        data.map((m) => m.params.data),
        ["a", "b", "c"]
      )
      yield* Fiber.interrupt(resumed.fiber)
    })
  )
})
