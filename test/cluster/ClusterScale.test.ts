/**
 * Acceptance 3 of issue 17: 1,000 sessions spread over three clustered
 * everything-server processes (SQLite), each doing 10 tool calls through a
 * round-robin forwarder, so nearly every call is served by a process that
 * does not own its session. Zero responses lost or duplicated: every request
 * gets exactly one response, with its own id and the tool's result. Sessions
 * run 16 at a time (each one's requests in order) to keep the run short on two
 * cores; replies are JSON bodies.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { callSimpleText, EXPECTED, openSession } from "./jsonPost.ts"
import { forwarder, startRunners } from "./support.ts"

const SESSIONS = 1_000
const CALLS = 10
const CONCURRENCY = 16

interface Tally {
  responses: number
  wrong: Array<string>
}

/** One session: initialize, initialized, 10 calls; every reply checked against its request. */
const runSession = async (url: string, n: number, tally: Tally) => {
  const sessionId = await openSession(url, n, `scale-${n}`)
  tally.responses++
  for (let call = 0; call < CALLS; call++) {
    const id = `s${n}-c${call}`
    const reply = await callSimpleText(url, id, sessionId)
    const message = JSON.parse(reply.text) as { id?: unknown; result?: { content?: Array<{ text?: string }> } }
    if (reply.status !== 200 || message.id !== id || message.result?.content?.[0]?.text !== EXPECTED) {
      tally.wrong.push(`${id}: ${reply.status} ${reply.text.slice(0, 200)}`)
    } else tally.responses++
  }
}

describe("1,000 sessions over three processes", () => {
  it.live(
    "10 calls each through a round-robin forwarder: zero lost or duplicated responses",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-scale-"))),
          (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
        )
        const runners = yield* startRunners(3, `sqlite:${join(dir, "cluster.db")}`, [
          "--json",
          "--max-sessions-per-client",
          "5000"
        ])
        const lb = yield* forwarder(runners)
        const tally: Tally = { responses: 0, wrong: [] }
        let next = 0
        const worker = async () => {
          while (next < SESSIONS) await runSession(lb.url, next++, tally)
        }
        yield* Effect.promise(() => Promise.all(Array.from({ length: CONCURRENCY }, worker)))

        assert.deepStrictEqual(tally.wrong, [])
        assert.strictEqual(tally.responses, SESSIONS * (CALLS + 1))
        // Each response went through the forwarder exactly once.
        assert.strictEqual(lb.answers.size, SESSIONS * (CALLS + 1))
        for (const [id, count] of lb.answers) if (count !== 1) assert.fail(`response ${id} relayed ${count} times`)
        // The sessions were spread: each process opened some and served calls of sessions it does not own.
        const opened = [0, 1, 2].map(
          (i) => lb.hops.filter((hop) => hop.rpc === "initialize" && hop.backend === i).length
        )
        for (const count of opened) assert.isAbove(count, SESSIONS / 6)
      }).pipe(Effect.scoped),
    600_000
  )
})
