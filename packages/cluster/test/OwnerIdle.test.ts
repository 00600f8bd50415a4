/**
 * `sessionIdleTimeout` across owners: a session's row says when it was last
 * active, the owner's sweep does not refresh an idle session's activity, and
 * the next owner of a session whose runner was lost does not reopen it once
 * it has been idle past the timeout (the client gets 404). Two owners on one
 * store in this process, on the TestClock; the first one's scope closed
 * stands for its runner lost.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SessionState from "@effect-mcp/cluster/SessionState"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"
import { inMemoryClient, openSession, rawPost, serverOptions } from "../../http/test/StreamableHttpFixtures.ts"
import { Owner } from "../src/internal/owner.ts"

/** The idle timeout, and the owners' activity period (its tenth, as `ClusteredHttpServer` makes it). */
const IDLE_MS = 60_000
const ACTIVITY_MS = 6_000

/** One runner's owner on `store`, in `scope`, with a client of its endpoint. */
const runner = (store: SessionState.SessionStateShape, self: string, scope: Scope.Scope) =>
  Effect.gen(function* () {
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make(serverOptions()),
      sessionIdleTimeout: IDLE_MS
    })
    const clock = yield* Effect.clockWith(Effect.succeed)
    const owner = new Owner(server, store, { self, activityMs: ACTIVITY_MS, clock })
    yield* owner.run
    const handler = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      owner.serve(request, request.headers["mcp-session-id"])
    )
    return { owner, http: inMemoryClient(handler) }
  }).pipe(Scope.provide(scope))

const call = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text: "hi" } }
})
const on = (sessionId: string) => ({ "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" })

/**
 * A session opened on a first runner, called at 20 s, the first runner swept
 * at 50 s and then lost; the session called through a second runner at `at`.
 */
const movedAt = (at: number) =>
  Effect.gen(function* () {
    const store = SessionState.makeMemory()
    const lost = yield* Scope.make()
    const a = yield* runner(store, "a", lost)
    const id = yield* openSession(a.http)
    yield* TestClock.adjust(20_000)
    assert.strictEqual((yield* rawPost(a.http, call(2), on(id))).status, 200)
    yield* TestClock.adjust(30_000)
    yield* a.owner.sweep(() => true, 2 * IDLE_MS)
    const written = (yield* store.get(id))?.state.activeAt
    yield* Scope.close(lost, Exit.void)
    const b = yield* runner(store, "b", yield* Effect.scope)
    yield* TestClock.adjust(at - 50_000)
    return { written, reply: yield* rawPost(b.http, call(3), on(id)) }
  })

describe("clustered sessions: the idle timeout holds across owners", () => {
  it.effect("a session idle past the timeout when its next owner is asked is not reopened: 404", () =>
    Effect.gen(function* () {
      // Last active at 20 s; expired at 20 s + the timeout, plus the activity's possible lag (2 periods).
      const { reply } = yield* movedAt(20_000 + IDLE_MS + 2 * ACTIVITY_MS + 1)
      assert.strictEqual(reply.status, 404)
    })
  )

  it.effect("a session active within the timeout is reopened by its next owner and served", () =>
    Effect.gen(function* () {
      const { reply, written } = yield* movedAt(20_000 + IDLE_MS - 1)
      // Idle since 20 s: the sweep at 50 s left its activity as the call wrote it.
      assert.strictEqual(written, 20_000)
      assert.strictEqual(reply.status, 200)
      assert.include(reply.text, "echo:hi")
    })
  )
})
