/**
 * The change feed between two servers sharing one SQLite file (two
 * connections, as two processes would have), on the TestClock: a change one
 * makes reaches the other's `subscriptions/listen` stream once, however often
 * the table is read again, and a server's own changes are not delivered back
 * to it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChangeFeed from "@effect-mcp/cluster/ChangeFeed"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { TestClock } from "effect/testing"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const watched = Resource.make({ uri: "test://watched", name: "watched", read: Effect.succeed("w") })
const server = Layer.provideMerge(Resource.layer(watched), McpServer.layer({ name: "feed", version: "1.0.0" }))

const tempFile = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-change-feed-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "cluster.db")))

/** A server with its feed on its own connection to `file`, and a listen stream on it. */
const process = (file: string) =>
  Effect.gen(function* () {
    const connection = yield* McpTest.connectRaw(server, { revision: "2026-07-28" })
    // Its own connection, open until the test ends.
    const sql = yield* Layer.build(NodeSqlite.layer({ filename: file }))
    yield* ChangeFeed.make().pipe(
      Effect.provideService(McpServer.McpServer, connection.server),
      Effect.provideContext(sql)
    )
    yield* connection.session
      .request("subscriptions/listen", {
        notifications: { resourcesListChanged: true, resourceSubscriptions: ["test://watched"] }
      })
      .pipe(Effect.forkChild)
    assert.strictEqual((yield* Queue.take(connection.notifications)).method, "notifications/subscriptions/acknowledged")
    return connection
  })

const methods = (connection: McpTest.RawConnection) =>
  Effect.map(connection.drain, (notifications) => notifications.map((n) => n.method))

describe("ChangeFeed", () => {
  it.effect("a change reaches the other server's listeners once, and never comes back to its own", () =>
    Effect.gen(function* () {
      const file = yield* tempFile
      const a = yield* process(file)
      const b = yield* process(file)

      yield* a.server.resourceUpdated("test://watched")
      // Heard at once where it was made, on B's next read of the table.
      assert.deepStrictEqual(yield* methods(a), ["notifications/resources/updated"])
      assert.deepStrictEqual(yield* methods(b), [])
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual(yield* methods(b), ["notifications/resources/updated"])

      yield* b.server.listChanged("resources")
      assert.deepStrictEqual(yield* methods(b), ["notifications/resources/list_changed"])
      // Many reads later (each reads the last seconds of changes again), nothing arrives twice.
      for (let i = 0; i < 20; i++) yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual(yield* methods(a), ["notifications/resources/list_changed"])
      assert.deepStrictEqual(yield* methods(b), [])
    }).pipe(Effect.scoped)
  )
})
