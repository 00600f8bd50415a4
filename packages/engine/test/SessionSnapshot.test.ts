/**
 * A session's snapshot: what a session continued from one starts with (its
 * revision, the peer's declarations, what features kept, where its request
 * ids go on), the changes that matter reported (ids reserved a block at a
 * time, a feature set), and the snapshot's JSON read back through its Schema.
 */
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as Session from "@effect-mcp/engine/Session"
import * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { serverInfo } from "./fixtures.ts"

const continued: SessionSnapshot.SessionSnapshot = {
  revision: "2025-11-25",
  peerCapabilities: { roots: {} },
  peerInfo: { name: "client", version: "1.0.0", title: "A client" },
  client: "10.0.0.1",
  principal: "alice",
  nextRequestId: 5000,
  features: { "logging/level": "debug" }
}

/** A server session continued from `continued`, and the raw client end. */
const continuedSession = Effect.gen(function* () {
  const [serverEnd, rawEnd] = yield* MemoryTransport.makePair()
  const server = yield* ServerSession.make({ serverInfo, capabilities: {} }).pipe(
    Effect.provideService(Transport.Transport, serverEnd),
    Effect.provideService(Session.StartInitialized, SessionSnapshot.toInitialized(continued))
  )
  const inbox = yield* Queue.unbounded<JsonRpc.Message>()
  yield* rawEnd.incoming.pipe(
    Stream.runForEach((frame) => (Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as never) : Effect.void)),
    Effect.forkScoped
  )
  let changes = 0
  server.state.onChange = () => changes++
  return { server, rawEnd, inbox, changes: () => changes }
})

describe("SessionSnapshot", () => {
  it.effect("a continued session starts ready, with what its features kept, and its snapshot reads back the same", () =>
    Effect.gen(function* () {
      const { server } = yield* continuedSession
      assert.strictEqual(server.state.phase, "Ready")
      assert.strictEqual(server.feature("logging/level"), "debug")
      assert.deepStrictEqual(
        SessionSnapshot.of(server.state, { client: continued.client, principal: continued.principal }),
        continued
      )
    })
  )

  it.effect("request ids go on where the session left them, reserved a block at a time", () =>
    Effect.gen(function* () {
      const { server, rawEnd, inbox, changes } = yield* continuedSession
      for (const expected of [5000, 5001]) {
        const asked = yield* Effect.forkScoped(server.request("roots/list", {}))
        const request = (yield* Queue.take(inbox)) as JsonRpc.Request
        assert.strictEqual(request.id, expected, "no id the session used where it was before")
        yield* rawEnd.send({ jsonrpc: "2.0", id: request.id, result: { roots: [] } })
        yield* Fiber.join(asked)
      }
      // The first id past the reserved ones reserved the next thousand: one change, not two.
      assert.strictEqual(server.state.requestIdsBelow, 6000)
      assert.strictEqual(changes(), 1)
    })
  )

  it.effect("setting a feature is a change; undefined removes it", () =>
    Effect.gen(function* () {
      const { server, changes } = yield* continuedSession
      server.setFeature("resources/subscriptions", ["file:///a"])
      server.setFeature("logging/level", undefined)
      assert.deepStrictEqual(server.state.features, { "resources/subscriptions": ["file:///a"] })
      assert.strictEqual(changes(), 2)
    })
  )

  it("its JSON reads back through the Schema; anything else reads as no snapshot", () => {
    assert.deepStrictEqual(SessionSnapshot.fromJson(SessionSnapshot.toJson(continued)), continued)
    assert.isUndefined(SessionSnapshot.fromJson("not json"))
    assert.isUndefined(SessionSnapshot.fromJson(JSON.stringify({ ...continued, revision: "1999-01-01" })))
    assert.isUndefined(SessionSnapshot.fromJson(JSON.stringify({ ...continued, nextRequestId: 1.5 })))
  })
})
