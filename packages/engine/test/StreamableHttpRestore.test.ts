/**
 * The hooks a cluster builds on: `sessionIdOf` picks the id of a session an
 * `initialize` opens, `restoreSession` reopens a session under a known id,
 * ready without a handshake, and `hasSession` tells which ids are open here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { initialize, rawPost, serve, sseData } from "./StreamableHttpFixtures.ts"

const call = (id: number, name: string, text = "") => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: { text } }
})

const session = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" })

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
      const reopened = yield* server.restoreSession("moved-here", {
        initialized: { revision: "2025-11-25", peerCapabilities: {}, peerInfo: { name: "client", version: "1.0.0" } }
      })
      assert.isTrue(reopened)
      assert.isTrue(server.hasSession("moved-here"))
      const served = yield* rawPost(http, call(2, "echo", "hello"), session("moved-here"))
      assert.strictEqual(served.status, 200)
      assert.deepStrictEqual((sseData(served.text)[0] as { result: unknown }).result, {
        content: [{ type: "text", text: "echo:hello" }]
      })
      // An id open already is not reopened over the live session.
      const twice = yield* server.restoreSession("moved-here", {
        initialized: { revision: "2025-11-25", peerCapabilities: {}, peerInfo: undefined }
      })
      assert.isFalse(twice)
      assert.strictEqual(server.sessionCount(), 1)
    })
  )

  it.effect("restoreSession refuses past maxSessions", () =>
    Effect.gen(function* () {
      const { server } = yield* serve({ maxSessions: 1 })
      const initialized = { revision: "2025-11-25" as const, peerCapabilities: {}, peerInfo: undefined }
      assert.isTrue(yield* server.restoreSession("a", { initialized }))
      assert.isFalse(yield* server.restoreSession("b", { initialized }))
      assert.isFalse(server.hasSession("b"))
    })
  )
})
