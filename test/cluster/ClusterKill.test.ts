/**
 * Issue 27, acceptance 1 (measured): three everything-server runners on
 * SQLite, and on PostgreSQL where it can be started, behind a round-robin
 * forwarder, 200 sessions each making 10 tool
 * calls, one runner killed with SIGKILL mid-traffic (the forwarder stops
 * routing to it at the same moment, as a health check would). Every call is
 * answered exactly once; no session initializes again; a call fails only
 * with the "lost" error (-32603) or, when the forwarder had handed it to the
 * killed runner itself, with the forwarder's 502. No call that started
 * after the kill fails: it waits for its session's shard to move and is
 * served then (its hop to the killed runner could not connect, so nothing
 * reached it).
 *
 * Each runner logs the calls it starts to one file (the everything server's
 * `MCP_CLUSTER_CALL_LOG`): no call runs twice, on any runner.
 *
 * Raw JSON-RPC over fetch (JSON replies) rather than an SDK client, so that
 * each call's outcome is read exactly as the server sent it (an SDK client
 * would turn a 404 into a new session). Sessions run 16 at a time.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Postgres from "../support/postgres.ts"
import { callSimpleText, EXPECTED, openSession } from "./jsonPost.ts"
import { callLog, fastFailover, forwarder, kill, startRunners } from "./support.ts"

const SESSIONS = 200
const CALLS = 10
const CONCURRENCY = 16
/** The kill comes once this many calls were answered: mid-traffic, signalled by the calls themselves. */
const KILL_AFTER = 500

type Outcome =
  | { readonly _tag: "Ok" }
  | { readonly _tag: "Error"; readonly code: number; readonly message: string }
  | { readonly _tag: "Http"; readonly status: number; readonly text: string }

interface Call {
  readonly id: string
  readonly startedAfterKill: boolean
  readonly outcome: Outcome
}

const outcomeOf = (id: string, reply: { readonly status: number; readonly text: string }): Outcome => {
  if (reply.status !== 200) return { _tag: "Http", status: reply.status, text: reply.text.slice(0, 200) }
  const message = JSON.parse(reply.text) as {
    readonly id?: unknown
    readonly result?: { readonly content?: ReadonlyArray<{ readonly text?: string }> }
    readonly error?: { readonly code: number; readonly message: string }
  }
  if (message.id !== id) return { _tag: "Http", status: reply.status, text: `answer to ${String(message.id)}` }
  if (message.error !== undefined) return { _tag: "Error", code: message.error.code, message: message.error.message }
  return message.result?.content?.[0]?.text === EXPECTED
    ? { _tag: "Ok" }
    : { _tag: "Http", status: reply.status, text: reply.text.slice(0, 200) }
}

const tempDatabase = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-kill-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => `sqlite:${join(dir, "cluster.db")}`))

const scenario = (label: string, storage: () => Effect.Effect<string, unknown, Scope.Scope>) =>
  it.live(
    `${label}: 200 sessions x 10 calls, every call answered once, no session re-initialized; no call started after the kill refused`,
    () =>
      Effect.gen(function* () {
        const log = yield* callLog
        const runners = yield* startRunners(3, yield* storage(), ["--json", "--max-sessions-per-client", "100000"], {
          timings: { ...fastFailover, ...log.env }
        })
        const lb = yield* forwarder(runners)
        const sessions: Array<string> = []
        for (let n = 0; n < SESSIONS; n++) {
          sessions.push(yield* Effect.promise(() => openSession(lb.url, n, `kill-${n}`)))
        }

        const calls: Array<Call> = []
        let answered = 0
        let killed = false
        const killNow = yield* Deferred.make<void>()
        const runSession = (n: number) =>
          Effect.promise(async () => {
            for (let c = 0; c < CALLS; c++) {
              const id = `s${n}-c${c}`
              const startedAfterKill = killed
              const reply = await callSimpleText(lb.url, id, sessions[n]!)
              calls.push({ id, startedAfterKill, outcome: outcomeOf(id, reply) })
              if (++answered === KILL_AFTER) Deferred.doneUnsafe(killNow, Effect.void)
            }
          })
        const traffic = yield* Effect.forkChild(
          Effect.forEach(
            Array.from({ length: SESSIONS }, (_, n) => n),
            runSession,
            { concurrency: CONCURRENCY, discard: true }
          )
        )
        yield* Deferred.await(killNow)
        lb.dead.add(0)
        yield* kill(runners[0]!)
        killed = true
        yield* Fiber.join(traffic)

        // Every call has exactly one outcome, and the forwarder relayed no answer twice.
        assert.strictEqual(calls.length, SESSIONS * CALLS)
        assert.strictEqual(new Set(calls.map((call) => call.id)).size, SESSIONS * CALLS)
        for (const [id, count] of lb.answers) assert.strictEqual(count, 1, `answer ${id} relayed ${count} times`)
        // Nobody initialized again.
        assert.strictEqual(lb.hops.filter((hop) => hop.rpc === "initialize").length, SESSIONS)
        const failed = calls.filter((call) => call.outcome._tag !== "Ok")
        // A failure is the lost error, or the forwarder's 502 for a call it had handed to the killed runner.
        for (const call of failed) {
          const outcome = call.outcome
          assert.isTrue(
            (outcome._tag === "Error" && outcome.code === -32603) ||
              (outcome._tag === "Http" && outcome.status === 502),
            `${call.id}: ${JSON.stringify(outcome)}`
          )
        }
        // No handler ran twice (every runner logs each call it starts), and every call answered ran once.
        const runs = log.runs()
        assert.deepStrictEqual(
          [...runs].filter(([, count]) => count > 1),
          [],
          "calls run more than once"
        )
        for (const call of calls) {
          if (call.outcome._tag === "Ok") assert.strictEqual(runs.get(call.id), 1, `${call.id} answered but not run`)
        }
        const refusedAfterKill = failed.filter((call) => call.startedAfterKill)
        assert.deepStrictEqual(
          refusedAfterKill.map((call) => `${call.id}: ${JSON.stringify(call.outcome)}`),
          [],
          "calls started after the kill wait for their shard to move and are served"
        )
        console.log(
          `${label}: killed runner 0 after ${KILL_AFTER} answers: ${calls.length} calls, ${failed.length} failed ` +
            `(${failed.length - refusedAfterKill.length} in flight at the kill, ` +
            `${failed.filter((call) => runs.get(call.id) === 1).length} of the failed had started running, ` +
            `${refusedAfterKill.length} started after it)`
        )
      }).pipe(Effect.scoped),
    240_000
  )

describe("a runner killed under traffic (SQLite)", () => {
  scenario("SQLite", () => tempDatabase)
})

let databases = 0
Postgres.describePostgres("a runner killed under traffic (PostgreSQL)", (server) => {
  scenario("PostgreSQL", () => Effect.suspend(() => server().createDatabase(`kill_${databases++}`)))
})
