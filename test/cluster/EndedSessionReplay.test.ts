/**
 * A session that ended is not resumable anywhere (transports, 2025-11-25:
 * once a session is terminated the server "MUST respond to requests
 * containing that session ID with HTTP 404 Not Found"): a GET with
 * `Last-Event-ID` after its DELETE gets 404, not the events its streams
 * stored (a tool's result among them). On a cluster of three runners on one
 * SQLite file (in this process), through every runner; and on two servers
 * sharing a SQLite event store (`--event-store`), on the one that never held
 * the session as on the one that did. Before the DELETE the same resumption
 * replays the result: a live session's events stay readable wherever the
 * client lands.
 */
import type * as EventStore from "@effect-mcp/http/EventStore"
import * as EverythingServer from "@effect-mcp/everything-server/EverythingServer"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as SqlEventStore from "@effect-mcp/sql/SqlEventStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startInProcess } from "./inProcess.ts"
import { openSession, post, REVISION } from "./jsonPost.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-ended-replay-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const on = (sessionId: string) => ({ "mcp-session-id": sessionId, "mcp-protocol-version": REVISION })

/** Calls the greeting tool with a name only its result carries; returns the SSE reply's event ids. */
const callGreet = (url: string, sessionId: string) =>
  Effect.promise(async () => {
    const reply = await post(
      url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "greet", arguments: { name: "secret" } } },
      sessionId
    )
    assert.strictEqual(reply.status, 200, reply.text)
    assert.include(reply.text, "Hello, secret!")
    return [...reply.text.matchAll(/^id: (\S+)$/gm)].map((match) => match[1]!)
  })

/** A GET resuming after `lastEventId`, read to its end (a replay ends; a refusal has a body). */
const resume = (url: string, sessionId: string, lastEventId: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      headers: { ...on(sessionId), accept: "text/event-stream", "last-event-id": lastEventId }
    })
    return { status: response.status, text: await response.text() }
  })

const remove = (url: string, sessionId: string) =>
  Effect.promise(async () => (await fetch(url, { method: "DELETE", headers: on(sessionId) })).status)

/** The scenario on endpoints sharing a store: opened and called on the first, deleted through `deleteVia`. */
const deletedThenResumed = (urls: ReadonlyArray<string>, deleteVia: string) =>
  Effect.gen(function* () {
    const sessionId = yield* Effect.promise(() => openSession(urls[0]!, 0, "ended"))
    const ids = yield* callGreet(urls[0]!, sessionId)
    assert.isAtLeast(ids.length, 1)
    // Live: resumed through the last endpoint, the result is replayed.
    const live = yield* resume(urls.at(-1)!, sessionId, ids[0]!)
    assert.strictEqual(live.status, 200)
    assert.include(live.text, "Hello, secret!")

    assert.strictEqual(yield* remove(deleteVia, sessionId), 200)
    const after = yield* Effect.promise(() =>
      post(urls.at(-1)!, { jsonrpc: "2.0", id: 9, method: "tools/list" }, sessionId)
    )
    assert.strictEqual(after.status, 404)
    for (const url of urls) {
      const resumed = yield* resume(url, sessionId, ids[0]!)
      assert.strictEqual(resumed.status, 404, `${url}: ${resumed.text}`)
      assert.notInclude(resumed.text, "secret")
    }
  })

describe("a deleted session's stored events", () => {
  it.live(
    "a cluster of three runners (SQLite): 404 through every runner after the DELETE",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const runners = yield* startInProcess(3, `sqlite:${join(dir, "cluster.db")}`)
        yield* deletedThenResumed(
          runners.map((runner) => runner.url),
          runners[1]!.url
        )
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "two servers sharing a SQLite event store: 404 on both after the DELETE",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const filename = join(dir, "events.db")
        // Each server has its own connection to the file, as each process has.
        const serve = Effect.gen(function* () {
          const store: EventStore.EventStoreShape = yield* SqlDatabase.use(`sqlite:${filename}`, SqlEventStore.make())
          const context = yield* Layer.build(
            NodeMcpServer.layerHttp(EverythingServer.layer(), { host: "127.0.0.1", eventStore: store })
          )
          return `${yield* Effect.provideContext(NodeMcpServer.url, context)}/mcp`
        })
        const a = yield* serve
        const b = yield* serve
        yield* deletedThenResumed([a, b], a)
      }).pipe(Effect.scoped),
    60_000
  )
})
