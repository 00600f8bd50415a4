/**
 * 2025-03-26 Streamable HTTP: the server "MUST NOT send a JSON-RPC response on
 * the [GET] stream unless resuming a stream associated with a previous client
 * request". A response goes to the stream of the POST that carried its
 * request (or to that stream's resumption); one no POST stream waits for is
 * dropped. Each test opens the GET stream, makes the server send responses,
 * then sends a notification as a barrier: the GET stream's next event must be
 * that notification, so a response that went there first fails the test.
 */
import { assert, describe, it } from "@effect/vitest"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as EventStore from "@effect-mcp/http/EventStore"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import {
  inMemoryClient,
  openEvents,
  openSession,
  rawPost,
  rawRequest,
  readAll,
  serverOptions,
  sseData
} from "./StreamableHttpFixtures.ts"

const version = "2025-03-26"
const headers = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": version })
const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name } })
const result = { content: [{ type: "text", text: "done" }] }
const working = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "working" } }
const barrier = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "barrier" } }

/**
 * A server whose `slow` tool drops its POST stream (`closeRequestStream`) and
 * answers once `release` is done (after a log, which gives that stream an event id to resume from); its sessions and their transports are kept,
 * and `stored` is done once the response to request 7 is in the event store.
 */
const setup = Effect.gen(function* () {
  const release = yield* Deferred.make<void>()
  const stored = yield* Deferred.make<void>()
  // 2025-03-26 streams open without a priming event: a log about the request gives the POST stream an event id.
  const slow: Session.Handler = () =>
    Effect.gen(function* () {
      const current = yield* CurrentRequest.CurrentRequest
      yield* current.notify("notifications/message", { level: "info", data: "working" })
      yield* StreamableHttpServer.closeRequestStream
      yield* Deferred.await(release)
      return result
    })
  const memory = EventStore.makeMemory()
  const store: EventStore.EventStoreShape = {
    ...memory,
    append: (streamId, data) =>
      Effect.tap(memory.append(streamId, data), () =>
        data.includes('"id":7') ? Deferred.succeed(stored, undefined) : Effect.void
      )
  }
  const sessions: Array<Session.SessionShape> = []
  const transports: Array<Transport.TransportShape> = []
  const server = yield* StreamableHttpServer.make({
    session: Effect.gen(function* () {
      transports.push(yield* Transport.Transport)
      const session = yield* ServerSession.make(serverOptions(new Map([["tools/call", slow]])))
      sessions.push(session)
      return session
    }),
    eventStore: store
  })
  const http = inMemoryClient(server.handler)
  const id = yield* openSession(http, version)
  const get = yield* rawRequest(http, "GET", { ...headers(id), accept: "text/event-stream" })
  assert.strictEqual(get.status, 200)
  // No priming event on 2025-03-26: the GET stream's first event is whatever the server sends first.
  const events = yield* openEvents(get)
  /** Sends the barrier and checks it is the GET stream's next event. */
  const nextIsBarrier = Effect.gen(function* () {
    yield* sessions[0]!.peer.notify(barrier.method, barrier.params)
    assert.deepStrictEqual(JSON.parse((yield* events.next).data), barrier)
  })
  return { http, id, release, stored, transport: transports[0]!, events, nextIsBarrier }
})

describe("2025-03-26 Streamable HTTP: the GET stream carries no response unless resuming", () => {
  it.effect("a result whose POST stream was dropped is kept for that stream's resumption, not sent on GET", () =>
    Effect.gen(function* () {
      const { http, id, release, stored, events, nextIsBarrier } = yield* setup
      const reply = yield* rawPost(http, call(7, "slow"), headers(id))
      // The server ended the POST stream after the log: no result there.
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(sseData(reply.text), [working])
      const lastId = /id: (\S+)/.exec(reply.text)![1]!
      yield* Deferred.succeed(release, undefined)
      // The result was written (to the store, no connection being open) before the barrier is sent.
      yield* Deferred.await(stored)
      yield* nextIsBarrier
      // Resuming the POST stream delivers it.
      const resumed = yield* readAll(
        yield* rawRequest(http, "GET", { ...headers(id), accept: "text/event-stream", "last-event-id": lastId })
      )
      assert.strictEqual(resumed.status, 200)
      assert.deepStrictEqual(sseData(resumed.text), [{ jsonrpc: "2.0", id: 7, result }])
      yield* Fiber.interrupt(events.fiber)
    })
  )

  it.effect("a response no POST stream waits for (unknown id, or answered already) is dropped, not sent on GET", () =>
    Effect.gen(function* () {
      const { http, id, release, transport, events, nextIsBarrier } = yield* setup
      yield* Deferred.succeed(release, undefined)
      // Request 7 is answered on its resumption; then the session answers it again, and ids never asked.
      const reply = yield* rawPost(http, call(7, "slow"), headers(id))
      const lastId = /id: (\S+)/.exec(reply.text)![1]!
      const resumed = yield* readAll(
        yield* rawRequest(http, "GET", { ...headers(id), accept: "text/event-stream", "last-event-id": lastId })
      )
      assert.deepStrictEqual(sseData(resumed.text), [{ jsonrpc: "2.0", id: 7, result }])
      yield* transport.send({ jsonrpc: "2.0", id: 7, result })
      yield* transport.send({ jsonrpc: "2.0", id: 99, result: {} })
      yield* transport.send({ jsonrpc: "2.0", id: "never-asked", error: { code: -32603, message: "late" } })
      yield* transport.send([{ jsonrpc: "2.0", id: 100, result: {} }])
      yield* nextIsBarrier
      yield* Fiber.interrupt(events.fiber)
    })
  )
})
