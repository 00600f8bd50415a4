/**
 * The durable session state on SQL (SQLite through node:sqlite): rows written,
 * read back, rewritten, forgotten, expired by age on the Clock; the answers
 * recorded once per stream and request; the in-memory store behaves the same.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SessionState from "@effect-mcp/cluster/SessionState"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"

const state = (logLevel?: string): SessionState.State => ({
  revision: "2025-11-25",
  peerCapabilities: { sampling: {} },
  peerInfo: { name: "client", version: "1.0.0" },
  client: "127.0.0.1",
  nextRequestId: 1001,
  features: {
    ...(logLevel === undefined ? {} : { "logging/level": logLevel }),
    "resources/subscriptions": ["file:///a"]
  }
})

const contract = <R>(
  name: string,
  store: Effect.Effect<SessionState.SessionStateShape, unknown, R>,
  provide: <A, E>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, unknown>
) =>
  describe(name, () => {
    it.effect("writes, reads back, rewrites and forgets a session's state", () =>
      provide(
        Effect.gen(function* () {
          const sessions = yield* store
          assert.isUndefined(yield* sessions.get("s1"))
          yield* sessions.put("s1", state())
          assert.deepStrictEqual(yield* sessions.get("s1"), { state: state(), owner: undefined })
          yield* sessions.put("s1", state("debug"))
          assert.strictEqual((yield* sessions.get("s1"))?.state.features["logging/level"], "debug")
          yield* sessions.remove("s1")
          assert.isUndefined(yield* sessions.get("s1"))
        })
      )
    )

    it.effect("names the session's owner: as written, kept by a write without one, changed by a touch", () =>
      provide(
        Effect.gen(function* () {
          const sessions = yield* store
          yield* sessions.put("s1", state(), "runner-a")
          assert.strictEqual((yield* sessions.get("s1"))?.owner, "runner-a")
          yield* sessions.put("s1", state("debug"))
          assert.strictEqual((yield* sessions.get("s1"))?.owner, "runner-a")
          yield* sessions.touch(["s1"], "runner-b")
          assert.strictEqual((yield* sessions.get("s1"))?.owner, "runner-b")
          yield* sessions.touch(["s1"])
          assert.strictEqual((yield* sessions.get("s1"))?.owner, "runner-b")
          yield* sessions.put("s1", state(), "runner-c")
          assert.deepStrictEqual(yield* sessions.get("s1"), { state: state(), owner: "runner-c" })
        })
      )
    )

    it.effect("a touched session does not expire", () =>
      provide(
        Effect.gen(function* () {
          const sessions = yield* store
          yield* sessions.put("held", state())
          yield* sessions.put("lost", state())
          yield* TestClock.adjust("10 minutes")
          yield* sessions.touch(["held", "unknown"])
          assert.strictEqual(yield* sessions.expire(60_000), 1)
          assert.isDefined(yield* sessions.get("held"))
          assert.isUndefined(yield* sessions.get("lost"))
        })
      )
    )

    it.effect(
      "refresh rewrites the sessions the owner still holds, and leaves another owner's row and unknown ones",
      () =>
        provide(
          Effect.gen(function* () {
            const sessions = yield* store
            yield* sessions.put("mine", state(), "runner-a")
            yield* sessions.put("taken", state(), "runner-a")
            yield* sessions.touch(["taken"], "runner-b")
            yield* TestClock.adjust("10 minutes")
            const later = { ...state("debug"), activeAt: 600_000 }
            yield* sessions.refresh(
              [
                { sessionId: "mine", state: later },
                { sessionId: "taken", state: later },
                { sessionId: "gone", state: later }
              ],
              "runner-a"
            )
            assert.deepStrictEqual(yield* sessions.get("mine"), { state: later, owner: "runner-a" })
            assert.deepStrictEqual(yield* sessions.get("taken"), { state: state(), owner: "runner-b" })
            assert.isUndefined(yield* sessions.get("gone"))
            // A refresh is a write: the row is not expired by age.
            assert.strictEqual(yield* sessions.expire(600_000 - 60_000), 1)
            assert.isDefined(yield* sessions.get("mine"))
          })
        )
    )

    it.effect("expires the sessions not written since a time on the Clock", () =>
      provide(
        Effect.gen(function* () {
          const sessions = yield* store
          yield* sessions.put("old", state())
          yield* TestClock.adjust("10 minutes")
          yield* sessions.put("new", state())
          const now = 10 * 60 * 1000
          assert.strictEqual(yield* sessions.expire(now - 60_000), 1)
          assert.isUndefined(yield* sessions.get("old"))
          assert.isDefined(yield* sessions.get("new"))
        })
      )
    )

    it.effect("records an answer once per stream and request, a batch all or none, forgotten by age", () =>
      provide(
        Effect.gen(function* () {
          const sessions = yield* store
          assert.isTrue(yield* sessions.claimAnswers("s_1", [7]))
          assert.isFalse(yield* sessions.claimAnswers("s_1", [7]))
          // Another stream's request 7, or request "7", is another request.
          assert.isTrue(yield* sessions.claimAnswers("s_2", [7]))
          assert.isTrue(yield* sessions.claimAnswers("s_1", ["7"]))
          // One of the batch is answered already: none of it is recorded, so 8 is still to answer.
          assert.isFalse(yield* sessions.claimAnswers("s_1", [8, 7]))
          assert.isTrue(yield* sessions.claimAnswers("s_1", [8, 9]))
          assert.isFalse(yield* sessions.claimAnswers("s_1", [9]))
          yield* TestClock.adjust("10 minutes")
          assert.isTrue(yield* sessions.claimAnswers("s_1", [10]))
          yield* sessions.forgetAnswers(60_000)
          assert.isTrue(yield* sessions.claimAnswers("s_1", [7]))
          assert.isFalse(yield* sessions.claimAnswers("s_1", [10]))
        })
      )
    )
  })

contract(
  "in memory",
  Effect.sync(() => SessionState.makeMemory()),
  (effect) => effect
)
contract("SQLite", SessionState.makeSql(), (effect) =>
  Effect.provide(effect, NodeSqlite.layer({ filename: ":memory:" }))
)

describe("SQLite, a table from before owners were written down", () => {
  it.effect("gains the owner column, and its rows read with no owner", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE mcp_cluster_sessions (id VARCHAR(255) PRIMARY KEY, state TEXT NOT NULL, updated_at BIGINT NOT NULL)`
      const sessions = yield* SessionState.makeSql()
      yield* sql`INSERT INTO mcp_cluster_sessions (id, state, updated_at) VALUES ('old', ${JSON.stringify(state())}, 0)`
      assert.deepStrictEqual(yield* sessions.get("old"), { state: state(), owner: undefined })
      yield* sessions.put("old", state(), "runner-a")
      assert.strictEqual((yield* sessions.get("old"))?.owner, "runner-a")
      // A second store on the same table (another runner starting) finds the column there.
      const again = yield* SessionState.makeSql()
      assert.strictEqual((yield* again.get("old"))?.owner, "runner-a")
    }).pipe(Effect.provide(NodeSqlite.layer({ filename: ":memory:" })))
  )
})
