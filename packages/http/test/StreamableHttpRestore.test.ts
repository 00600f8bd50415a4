/**
 * The hooks a cluster builds on: `sessionIdOf` picks the id of a session an
 * `initialize` opens, `restoreSession` reopens a session under a known id
 * from its snapshot, ready without a handshake, `hasSession` tells which ids
 * are open here, and `snapshot`/`changes`/`takeChange` say what a session is
 * and when that changed (negotiated, closed and why).
 */
import { assert, describe, it } from "@effect/vitest"
import type * as SessionSnapshot from "@effect-mcp/engine/SessionSnapshot"
import type * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { initialize, openSession, rawPost, rawRequest, serve, sseData } from "./StreamableHttpFixtures.ts"

const call = (id: number, name: string, text = "") => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: { text } }
})

const session = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" })

const snapshot = (extra: Partial<SessionSnapshot.SessionSnapshot> = {}): SessionSnapshot.SessionSnapshot => ({
  revision: "2025-11-25",
  peerCapabilities: {},
  peerInfo: { name: "client", version: "1.0.0" },
  nextRequestId: 1,
  features: {},
  ...extra
})

describe("Streamable HTTP server: sessions opened under a given id", () => {
  it.effect("sessionIdOf names the session an initialize opens; an id in use gets a random one", () =>
    Effect.gen(function* () {
      const { http, server } = yield* serve({ sessionIdOf: (request) => request.headers["x-pick"] })
      const picked = yield* rawPost(http, initialize(1), { "x-pick": "chosen-id" })
      assert.strictEqual(picked.headers["mcp-session-id"], "chosen-id")
      assert.isTrue(server.hasSession("chosen-id"))
      const again = yield* rawPost(http, initialize(1), { "x-pick": "chosen-id" })
      const other = again.headers["mcp-session-id"]!
      assert.notStrictEqual(other, "chosen-id")
      assert.isTrue(server.hasSession(other))
      const random = yield* rawPost(http, initialize(1))
      assert.match(random.headers["mcp-session-id"]!, /^[0-9a-f]{32}$/)
    })
  )

  it.effect("restoreSession reopens a session ready in its revision: requests are served without initialize", () =>
    Effect.gen(function* () {
      const { http, server } = yield* serve()
      assert.isFalse(server.hasSession("moved-here"))
      const unknown = yield* rawPost(http, call(1, "echo", "x"), session("moved-here"))
      assert.strictEqual(unknown.status, 404)
      const reopened = yield* server.restoreSession(
        "moved-here",
        snapshot({ features: { kept: [1] }, nextRequestId: 3000 })
      )
      assert.isTrue(reopened)
      assert.isTrue(server.hasSession("moved-here"))
      const served = yield* rawPost(http, call(2, "echo", "hello"), session("moved-here"))
      assert.strictEqual(served.status, 200)
      assert.deepStrictEqual((sseData(served.text)[0] as { result: unknown }).result, {
        content: [{ type: "text", text: "echo:hello" }]
      })
      // It is what it was where it was before, last active now.
      assert.deepStrictEqual(
        server.snapshot("moved-here"),
        snapshot({ features: { kept: [1] }, nextRequestId: 3000, activeAt: 0 })
      )
      // An id open already is not reopened over the live session.
      const twice = yield* server.restoreSession("moved-here", snapshot())
      assert.isFalse(twice)
      assert.strictEqual(server.sessionCount(), 1)
    })
  )

  it.effect("restoreSession refuses past maxSessions", () =>
    Effect.gen(function* () {
      const { server } = yield* serve({ maxSessions: 1 })
      assert.isTrue(yield* server.restoreSession("a", snapshot()))
      assert.isFalse(yield* server.restoreSession("b", snapshot()))
      assert.isFalse(server.hasSession("b"))
    })
  )

  it.effect("a session bound to a principal is restored for that principal only", () =>
    Effect.gen(function* () {
      const { server } = yield* serve()
      const bound = snapshot({ principal: "alice", client: "alice" })
      assert.isFalse(yield* server.restoreSession("s", bound), "no credentials")
      assert.isFalse(yield* server.restoreSession("s", bound, { owner: "mallory", scopes: [], value: {} }))
      assert.isTrue(yield* server.restoreSession("s", bound, { owner: "alice", scopes: [], value: {} }))
      assert.deepStrictEqual(server.snapshot("s"), { ...bound, activeAt: 0 })
    })
  )

  it.effect("a session idle past the timeout since its snapshot's activeAt is not reopened: it expired", () =>
    Effect.gen(function* () {
      const { server } = yield* serve({ sessionIdleTimeout: "1 minute" })
      yield* TestClock.adjust("5 minutes")
      assert.isFalse(yield* server.restoreSession("expired", snapshot({ activeAt: 4 * 60_000 - 1 })))
      assert.isFalse(server.hasSession("expired"))
      assert.isTrue(yield* server.restoreSession("active", snapshot({ activeAt: 4 * 60_000 + 1 })))
    })
  )
})

describe("Streamable HTTP server: the snapshot of each session and its changes", () => {
  it.effect(
    "initialize is a change; the snapshot holds what was negotiated; a DELETE closes it, an idle one expires",
    () =>
      Effect.gen(function* () {
        const { http, server } = yield* serve({ sessionIdleTimeout: "1 minute" })
        const changes = yield* Queue.unbounded<StreamableHttpServer.SessionChange>()
        const stream = yield* server.changes
        yield* Effect.forkScoped(Stream.runForEach(stream, (change) => Queue.offer(changes, change)))
        const id = yield* openSession(http)
        const saved = yield* Queue.take(changes)
        assert.deepStrictEqual(saved, {
          _tag: "Saved",
          sessionId: id,
          snapshot: {
            revision: "2025-11-25",
            peerCapabilities: {},
            peerInfo: { name: "raw", version: "1" },
            nextRequestId: 1,
            features: {},
            activeAt: 0
          }
        })
        assert.deepStrictEqual(server.snapshot(id), saved._tag === "Saved" ? saved.snapshot : undefined)
        // Taken at once by a keeper, a change is not read again.
        const other = yield* openSession(http)
        assert.strictEqual(server.takeChange(other)?._tag, "Saved")
        assert.isUndefined(server.takeChange(other))
        const deleted = yield* rawRequest(http, "DELETE", session(id))
        assert.strictEqual(deleted.status, 200)
        assert.deepStrictEqual(yield* Queue.take(changes), { _tag: "Closed", sessionId: id, reason: "Deleted" })
        assert.isUndefined(server.snapshot(id))
        yield* TestClock.adjust("2 minutes")
        assert.deepStrictEqual(yield* Queue.take(changes), { _tag: "Closed", sessionId: other, reason: "Expired" })
        assert.isTrue(yield* server.restoreSession("back", snapshot()))
        assert.isTrue(yield* server.closeSession("back", "Released"))
        assert.deepStrictEqual(yield* Queue.take(changes), { _tag: "Closed", sessionId: "back", reason: "Released" })
      })
  )
})
