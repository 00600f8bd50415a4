/**
 * A runner that holds no shard (assigned no shard group: a process that only
 * receives, or any runner in the moments after it starts, before its locks
 * are taken) opens sessions all the same: it picks the new session an id,
 * and the shard's owner opens it under that id when the hop says so. The
 * client then uses the session through either runner. Before the hop carried
 * what the receiving process says, every such `initialize` was refused by
 * the owner (no id to open under) and answered -32603 after six tries.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startHoldingNothing, startInProcess } from "./inProcess.ts"
import { callSimpleText, EXPECTED, openSession } from "./jsonPost.ts"
import { messagesOf } from "./sse.ts"

const tempDatabase = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-front-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => `sqlite:${join(dir, "cluster.db")}`))

describe("cluster: a runner holding no shard", () => {
  it.live("opens sessions through their owner, under the id it picked, and serves their calls", () =>
    Effect.gen(function* () {
      const storage = yield* tempDatabase
      const [owner] = yield* startInProcess(1, storage)
      const front = yield* startHoldingNothing(storage)
      for (let n = 0; n < 3; n++) {
        const sessionId = yield* Effect.promise(() => openSession(front!.url, n, `front-${n}`))
        for (const url of [front!.url, owner!.url]) {
          const id = `s${n}-${url}`
          const reply = yield* Effect.promise(() => callSimpleText(url, id, sessionId))
          assert.strictEqual(reply.status, 200, reply.text)
          const answer = messagesOf(reply.text).find((message) => message.id === id)
          assert.strictEqual(answer?.result.content[0].text, EXPECTED)
        }
      }
    }).pipe(Effect.scoped)
  )
})
