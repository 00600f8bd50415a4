/**
 * The change feed between two servers sharing one SQLite file (two
 * connections, as two processes would have), on the TestClock: a change one
 * makes reaches the other's `subscriptions/listen` stream once, however often
 * the table is read again, and a server's own changes are not delivered back
 * to it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChangeFeed from "@effect-mcp/cluster/ChangeFeed"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeSqlite from "@effect-mcp/sql/NodeSqlite"
import * as SqlTaskStore from "@effect-mcp/sql/SqlTaskStore"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
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

let finalized = 0
const slow = Tool.make("slow", {
  input: Schema.Struct({ seconds: Schema.Number }),
  taskSupport: "optional",
  handler: ({ seconds }) =>
    Effect.as(
      Effect.ensuring(
        Effect.sleep(`${seconds} seconds`),
        Effect.sync(() => finalized++)
      ),
      `slept ${seconds}`
    )
})
const greet = Tool.make("greet", {
  input: Schema.Struct({}),
  taskSupport: "optional",
  handler: () =>
    Effect.map(Elicitation.form({ message: "name?", schema: Schema.Struct({ name: Schema.String }) }), (answer) =>
      answer.action === "accept" ? `Hello, ${answer.content.name}` : "nobody"
    )
})
const tasksServer = Layer.provideMerge(Tool.layer(slow, greet), McpServer.layer({ name: "tasks", version: "1.0.0" }))

/** A server with its tasks in `file` (its own connection, as a process would have) and its change feed. */
const taskProcess = (file: string) =>
  Effect.gen(function* () {
    const sql = yield* Layer.build(NodeSqlite.layer({ filename: file }))
    const connection = yield* McpTest.connectRaw(
      Layer.provide(tasksServer, Layer.provide(SqlTaskStore.layer(), Layer.succeedContext(sql))),
      {
        revision: "2026-07-28",
        capabilities: { elicitation: {}, extensions: { [Tasks.extensionId]: {} } },
        notifications: ["notifications/subscriptions/acknowledged", "notifications/tasks"]
      }
    )
    yield* ChangeFeed.make().pipe(
      Effect.provideService(McpServer.McpServer, connection.server),
      Effect.provideContext(sql)
    )
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

  it.effect(
    "a task's status reaches the other server's listen stream, and a cancel there interrupts its work here",
    () =>
      Effect.gen(function* () {
        const file = yield* tempFile
        finalized = 0
        const a = yield* taskProcess(file)
        const b = yield* taskProcess(file)
        const listen = (taskId: string) =>
          Effect.gen(function* () {
            yield* b.session
              .request("subscriptions/listen", { notifications: { taskIds: [taskId] } })
              .pipe(Effect.forkChild)
            assert.strictEqual((yield* Queue.take(b.notifications)).method, "notifications/subscriptions/acknowledged")
          })
        const heard = Effect.map(b.drain, (notes) =>
          notes.map((n) => {
            const task = n.params as { readonly status: string; readonly result?: { readonly content: unknown } }
            return [n.method, task.status, task.result?.content]
          })
        )

        // Made and run on A, heard on B once A has written it and B has read the table.
        const quick = (yield* a.request("tools/call", { name: "slow", arguments: { seconds: 0.9 } })) as {
          taskId: string
        }
        yield* listen(quick.taskId)
        // Done at 900 ms, between B's reads at 800 and 1000 ms.
        yield* TestClock.adjust("900 millis")
        assert.deepStrictEqual(yield* heard, [])
        yield* TestClock.adjust("100 millis")
        assert.deepStrictEqual(yield* heard, [
          ["notifications/tasks", "completed", [{ type: "text", text: "slept 0.9" }]]
        ])
        assert.strictEqual(finalized, 1)

        // Cancelled through B while it runs on A: B's listener hears it at once, A stops the work on its next read.
        const long = (yield* a.request("tools/call", { name: "slow", arguments: { seconds: 600 } })) as {
          taskId: string
        }
        yield* listen(long.taskId)
        yield* b.request("tasks/cancel", { taskId: long.taskId })
        assert.deepStrictEqual(yield* heard, [["notifications/tasks", "cancelled", undefined]])
        assert.strictEqual(finalized, 1)
        yield* TestClock.adjust("200 millis")
        assert.strictEqual(finalized, 2)
        const read = (yield* a.request("tasks/get", { taskId: long.taskId })) as { readonly status: string }
        assert.strictEqual(read.status, "cancelled")
        // Many reads later, nothing is heard twice.
        for (let i = 0; i < 10; i++) yield* TestClock.adjust("200 millis")
        assert.deepStrictEqual(yield* heard, [])
      }).pipe(Effect.scoped)
  )

  it.effect("input for a task another server runs (tasks/update there) reaches it and ends its wait", () =>
    Effect.gen(function* () {
      const file = yield* tempFile
      const a = yield* taskProcess(file)
      const b = yield* taskProcess(file)
      const made = (yield* a.request("tools/call", { name: "greet", arguments: {} })) as { taskId: string }
      yield* TestClock.adjust("1 millis")
      const waiting = (yield* b.request("tasks/get", { taskId: made.taskId })) as {
        readonly status: string
        readonly inputRequests: { readonly [key: string]: unknown }
      }
      assert.strictEqual(waiting.status, "input_required")
      const [key] = Object.keys(waiting.inputRequests)
      yield* b.request("tasks/update", {
        taskId: made.taskId,
        inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } }
      })
      // A reads the table on its next poll, answers the ask, and the task ends.
      yield* TestClock.adjust("200 millis")
      const done = (yield* b.request("tasks/get", { taskId: made.taskId })) as {
        readonly status: string
        readonly result: { readonly content: unknown }
      }
      assert.strictEqual(done.status, "completed")
      assert.deepStrictEqual(done.result.content, [{ type: "text", text: "Hello, Ada" }])
    }).pipe(Effect.scoped)
  )
})
