/**
 * List changes and resource updates fanned out across the runners of a
 * cluster (issue 17: `subscriptions/listen` notifications across processes).
 * Three everything-server runners on one database, in this process (nothing
 * here needs a process of its own: each runner has its own connections, HTTP
 * server and runner port, as a process would; ./inProcess.ts): session A (2025-11-25)
 * lives on runner 0 with its GET stream held through runner 2 and a
 * subscription to test://watched-resource; session B lives on runner 1; a
 * 2026-07-28 `subscriptions/listen` stream is served by runner 2. A change
 * made on runner 1 (B's calls) and one made on runner 0 (A's call) reach
 * every session and the listen stream exactly once. On SQLite, and on
 * PostgreSQL (test/support/postgres.ts) where it can be started.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Postgres from "../support/postgres.ts"
import { type Open, session, stateless, until } from "./sse.ts"
import { startInProcess } from "./inProcess.ts"

const tempDatabase = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-changes-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => `sqlite:${join(dir, "cluster.db")}`))

const TOOLS = "notifications/tools/list_changed"
const PROMPTS = "notifications/prompts/list_changed"
const UPDATED = "notifications/resources/updated"

const counts = (open: Open) => [open.count(TOOLS), open.count(PROMPTS), open.count(UPDATED)]

const scenario = (storage: () => Effect.Effect<string, unknown, Scope.Scope>) =>
  it.live(
    "a change on one runner reaches the sessions and listen streams of every runner exactly once",
    () =>
      Effect.gen(function* () {
        const runners = yield* startInProcess(3, yield* storage())
        const [r0, r1, r2] = runners.map((runner) => runner.url) as [string, string, string]

        const a = yield* session(r0)
        const b = yield* session(r1)
        const aStream = yield* a.stream(r2)
        const bStream = yield* b.stream(r1)
        assert.strictEqual(aStream.status, 200)
        assert.strictEqual(bStream.status, 200)
        // Subscribed through runner 1: forwarded to A's owner, runner 0.
        yield* a.request(r1, "resources/subscribe", { uri: "test://watched-resource" })
        const listen = yield* stateless(r2, "subscriptions/listen", {
          notifications: {
            toolsListChanged: true,
            promptsListChanged: true,
            resourceSubscriptions: ["test://watched-resource"]
          }
        })
        yield* until(() => listen.count("notifications/subscriptions/acknowledged") === 1, "the listen acknowledged")

        // Made on runner 1: B's tool list changes, then the watched resource is updated.
        const toggled = yield* b.request(r1, "tools/call", { name: "test_trigger_tool_change", arguments: {} })
        assert.strictEqual(toggled.result.content[0].text, "test_dynamic_tool added")
        yield* b.request(r1, "tools/call", { name: "test_trigger_resource_update", arguments: {} })
        yield* until(() => aStream.count(UPDATED) === 1 && listen.count(UPDATED) === 1, "the update on runners 0 and 2")
        // Made on runner 0: A's prompt list changes.
        yield* a.request(r0, "tools/call", { name: "test_trigger_prompt_change", arguments: {} })
        yield* until(
          () => bStream.count(PROMPTS) === 1 && listen.count(PROMPTS) === 1,
          "the prompt change on runners 1 and 2"
        )

        // Nothing arrives twice. The barrier: a second prompt change, made after the others, reaches every
        // stream; the runners read the changes again for seconds (ChangeFeed), each read in order, so a
        // change delivered twice would be on its stream before this one.
        yield* a.request(r0, "tools/call", { name: "test_trigger_prompt_change", arguments: {} })
        yield* until(
          () => [aStream, bStream, listen].every((stream) => stream.count(PROMPTS) === 2),
          "the second prompt change on every stream",
          20_000,
          () => [counts(aStream), counts(bStream), counts(listen)]
        )
        assert.deepStrictEqual(counts(aStream), [1, 2, 1], "session A (runner 0, GET through runner 2)")
        // B did not subscribe to the resource.
        assert.deepStrictEqual(counts(bStream), [1, 2, 0], "session B (runner 1)")
        assert.deepStrictEqual(counts(listen), [1, 2, 1], "the listen stream (runner 2)")
      }).pipe(Effect.scoped),
    120_000
  )

describe("cluster: changes fanned out (SQLite)", () => {
  scenario(() => tempDatabase)
})

let databases = 0
Postgres.describePostgres("cluster: changes fanned out (PostgreSQL)", (server) => {
  scenario(() => Effect.suspend(() => server().createDatabase(`changes_${databases++}`)))
})
