/**
 * `--event-store` with real processes: two everything-server processes on
 * 127.0.0.1 sharing one database (a SQLite file; PostgreSQL where it can be
 * started). A call whose SSE reply process A closes mid-call
 * (`test_reconnection`) is resumed with `Last-Event-ID` on process B, which
 * never held the session: B replays the result A stored.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Postgres from "../support/postgres.ts"
import { everythingBin, node, spawnChild } from "../support/ServerProcess.ts"

const version = "2025-11-25"

const spawn = (eventStore: string) =>
  Effect.gen(function* () {
    const child = yield* spawnChild(node, [everythingBin, "--http", "--port", "0", "--event-store", eventStore])
    const match = yield* child.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/, 60_000)
    return `${match[1]!}/mcp`
  })

const headers = (session?: string, extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": version,
  ...(session === undefined ? {} : { "mcp-session-id": session }),
  ...extra
})

const exchange = (url: string, init: RequestInit) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { response, text: await response.text() }
  })

const events = (text: string) =>
  text
    .split("\n\n")
    .filter((block) => block.includes("data:"))
    .map((block) => ({
      id: /^id: (.*)$/m.exec(block)?.[1],
      data: block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n")
    }))

const resumeOnTheOther = (eventStore: string) =>
  Effect.gen(function* () {
    const [a, b] = yield* Effect.all([spawn(eventStore), spawn(eventStore)], { concurrency: 2 })
    const init = yield* exchange(a!, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } }
      })
    })
    const session = init.response.headers.get("mcp-session-id")!
    yield* exchange(a!, {
      method: "POST",
      headers: headers(session),
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
    })
    // A closes the reply after its priming event; the result comes later, into the store.
    const call = yield* exchange(a!, {
      method: "POST",
      headers: headers(session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "test_reconnection", arguments: {} }
      })
    })
    const primed = events(call.text)
    assert.deepStrictEqual(
      primed.map((event) => event.data),
      [""]
    )
    const lastEventId = primed[0]!.id!
    // The result is stored 100 ms after the reply closed, inside process A: nothing outside tells when,
    // so B is asked to replay again until it has something; the 20 s bound only fires on breakage.
    const resume = Effect.map(
      exchange(b!, {
        method: "GET",
        headers: headers(session, { accept: "text/event-stream", "last-event-id": lastEventId })
      }),
      (resumed) => {
        assert.strictEqual(resumed.response.status, 200)
        return events(resumed.text)
      }
    )
    const replayed = yield* resume.pipe(
      Effect.repeat({ until: (replay) => replay.length > 0, schedule: Schedule.spaced("50 millis") }),
      Effect.timeout("20 seconds")
    )
    assert.strictEqual(replayed.length, 1)
    const result = JSON.parse(replayed[0]!.data)
    assert.strictEqual(result.id, 2)
    assert.strictEqual(result.result.content[0].text, "Reconnection test completed successfully")
  })

describe("--event-store: a reply resumed on another process", () => {
  it.live(
    "SQLite file shared by two processes",
    () =>
      Effect.gen(function* () {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-events-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        yield* resumeOnTheOther(`sqlite:${path.join(dir, "events.db")}`)
      }).pipe(Effect.scoped),
    120_000
  )
})

Postgres.describePostgres("--event-store: PostgreSQL", (server) => {
  it.live("PostgreSQL shared by two processes", () => resumeOnTheOther(server().url).pipe(Effect.scoped), 120_000)
})
