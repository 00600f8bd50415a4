/**
 * Issue 27, acceptance 1, its last part: a killed runner started again, and
 * the shards moving back to it under traffic, with no call failing.
 *
 * Three everything-server runners behind a round-robin forwarder; 100
 * sessions opened; runner 0 killed with SIGKILL while idle (what a kill does
 * under traffic is ClusterKill's), and the test waits until its shards have
 * moved to the other two. Then traffic starts (every session calls a tool in
 * a loop, all of them at once), and once 200 calls are answered a new runner
 * starts in place of the killed one and the forwarder routes to it: the
 * cluster rebalances, its shards (and the sessions on them) moving to it,
 * while the calls go on. Each session keeps calling until the cluster has
 * settled with the new runner and then three times more, so every session is
 * called after its shard moved. Every call succeeds: a session moved by a
 * rebalance is reopened from its durable state by its new owner and serves
 * its next call; nothing is refused, nothing initializes again, every answer
 * is relayed once.
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
import { settled } from "./settled.ts"
import { callLog, fastFailover, forwarder, kill, startRunner, startRunners } from "./support.ts"

const SESSIONS = 100
/** The new runner starts once this many calls of the traffic were answered. */
const RESTART_AFTER = 200
/** Calls each session makes once the cluster has settled with the new runner. */
const AFTER_SETTLED = 3

const tempDatabase = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-restart-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => `sqlite:${join(dir, "cluster.db")}`))

/** What a call answered, when it is not the tool's text. */
const failureOf = (id: string, reply: { readonly status: number; readonly text: string }): string | undefined => {
  if (reply.status !== 200) return `HTTP ${reply.status}: ${reply.text.slice(0, 200)}`
  const message = JSON.parse(reply.text) as {
    readonly id?: unknown
    readonly result?: { readonly content?: ReadonlyArray<{ readonly text?: string }> }
  }
  if (message.id !== id) return `the answer to ${String(message.id)}`
  return message.result?.content?.[0]?.text === EXPECTED ? undefined : reply.text.slice(0, 200)
}

const scenario = (label: string, storage: () => Effect.Effect<string, unknown, Scope.Scope>) =>
  it.live(
    `${label}: a killed runner started again takes its shards back under traffic, and no call fails`,
    () =>
      Effect.gen(function* () {
        const database = yield* storage()
        const flags = ["--json", "--max-sessions-per-client", "100000"]
        const log = yield* callLog
        const timings = { ...fastFailover, ...log.env }
        const runners = yield* startRunners(3, database, flags, { timings })
        // Mutable: the new runner takes the killed one's place in the forwarder's list.
        const backends = runners.map((runner) => ({ base: runner.base }))
        const lb = yield* forwarder(backends)
        const sessions: Array<string> = []
        for (let n = 0; n < SESSIONS; n++) {
          sessions.push(yield* Effect.promise(() => openSession(lb.url, n, `restart-${n}`)))
        }

        // Runner 0 is lost while idle; its shards move to the two others.
        lb.dead.add(0)
        yield* kill(runners[0]!)
        yield* settled(database, [runners[1]!.runnerPort, runners[2]!.runnerPort])

        const failures: Array<string> = []
        let answered = 0
        let settledAgain = false
        const restartNow = yield* Deferred.make<void>()
        const runSession = (n: number) =>
          Effect.promise(async () => {
            let afterSettled = 0
            for (let c = 0; afterSettled < AFTER_SETTLED; c++) {
              if (settledAgain) afterSettled++
              const id = `s${n}-c${c}`
              const reply = await callSimpleText(lb.url, id, sessions[n]!)
              const failure = failureOf(id, reply)
              if (failure !== undefined) failures.push(`${id}: ${failure}`)
              if (++answered === RESTART_AFTER) Deferred.doneUnsafe(restartNow, Effect.void)
            }
          })
        // Sessions loop until the cluster has settled again: all of them are in flight at once, 16 at a time
        // would leave the last ones to start only after the rebalance.
        const traffic = yield* Effect.forkChild(
          Effect.forEach(
            Array.from({ length: SESSIONS }, (_, n) => n),
            runSession,
            { concurrency: SESSIONS, discard: true }
          )
        )
        yield* Deferred.await(restartNow)
        const restarted = yield* startRunner(database, flags, timings)
        // Killed at the end like the others (runs before its own graceful finalizer, which then finds it gone).
        yield* Effect.addFinalizer(() => kill(restarted))
        backends[0] = { base: restarted.base }
        lb.dead.delete(0)
        yield* settled(database, [restarted.runnerPort, runners[1]!.runnerPort, runners[2]!.runnerPort])
        settledAgain = true
        yield* Fiber.join(traffic)

        assert.deepStrictEqual(failures, [], `${failures.length} of ${answered} calls failed`)
        for (const [id, count] of lb.answers) assert.strictEqual(count, 1, `answer ${id} relayed ${count} times`)
        assert.strictEqual(lb.hops.filter((hop) => hop.rpc === "initialize").length, SESSIONS)
        // Each call ran exactly once, on whichever runner held its session then (every runner logs what it starts).
        const runs = log.runs()
        assert.strictEqual(runs.size, answered, "calls run")
        assert.deepStrictEqual(
          [...runs].filter(([, count]) => count !== 1),
          [],
          "calls run more than once"
        )
        // The new runner served calls: the shards (and sessions) moved to it.
        assert.isAbove(lb.hops.filter((hop) => hop.backend === 0 && hop.rpc === "tools/call").length, 0)
        console.log(`${label}: ${answered} calls across the kill's recovery and the rebalance, none failed`)
      }).pipe(Effect.scoped),
    240_000
  )

describe("a killed runner started again (SQLite)", () => {
  scenario("SQLite", () => tempDatabase)
})

let databases = 0
Postgres.describePostgres("a killed runner started again (PostgreSQL)", (server) => {
  scenario("PostgreSQL", () => Effect.suspend(() => server().createDatabase(`restart_${databases++}`)))
})
