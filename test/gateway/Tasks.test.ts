/**
 * Tasks through the gateway, with real peers: our everything server over
 * stdio behind the gateway (its task tools: `slow_compute` takes a task where
 * the client can, `failing_job` always runs as one), the gateway served over
 * Streamable HTTP on 127.0.0.1, and the official SDK 1.x `Client`'s
 * experimental 2025-11-25 tasks downstream. A downstream task is the
 * gateway's, run upstream as a task; only the client that made it gets,
 * lists or cancels it, and cancelling it cancels the upstream's.
 */
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import type * as McpServer from "@effect-mcp/server/McpServer"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { toArrayAsync } from "@modelcontextprotocol/sdk/experimental/tasks/index.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { everythingStdio } from "./fixture.ts"

// biome-ignore lint/suspicious/noExplicitAny: results are read by path; the assertions are the type check
type Json = any

const textOf = (result: Json): string => result?.content?.[0]?.text ?? ""

/**
 * The gateway in front of the stdio everything server (unprefixed), over HTTP, speaking `upstream` to it (default:
 * the newest both speak); its URL and its host.
 */
const serve = (upstream?: "2025-11-25") =>
  Effect.gen(function* () {
    const gateway = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config: {
          mcpServers: {
            everything: everythingStdio
          }
        },
        unprefixed: "everything",
        healthCheck: false,
        startTimeout: "60 seconds",
        ...(upstream === undefined ? {} : { client: { supportedVersions: [upstream] } })
      }).pipe(Layer.provide(NodeConnector.layer({ stderr: () => "capture" })))
    )
    const server = Layer.succeedContext(gateway as Context.Context<McpServer.McpServer>)
    const http = yield* Layer.build(NodeMcpServer.layerHttp(server, { host: "127.0.0.1" }))
    const url = `${yield* Effect.provideContext(NodeMcpServer.url, http)}/mcp`
    return { url, host: Context.get(gateway, McpHost.McpHost) }
  })

/**
 * The tasks of the gateway's upstream connection once `until` holds of them: the gateway makes its upstream
 * call after it answers with its own task, and nothing tells the test when (each look is a `tasks/list`).
 */
const upstreamTasks = (host: McpHost.McpHostShape, until: (tasks: ReadonlyArray<Json>) => boolean) =>
  Effect.flatMap(host.tasks("everything"), (tasks) => Stream.runCollect(tasks.list)).pipe(
    Effect.repeat({ until, schedule: Schedule.spaced("20 millis") }),
    Effect.timeout("10 seconds")
  )

/** An SDK 1.x client of the gateway, for the scope. */
const connect = (url: string, name: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name, version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** One client's tasks through the gateway, the upstream on `upstream` (default: the newest both speak). */
const run = (upstream?: "2025-11-25") =>
  Effect.gen(function* () {
    const { url, host } = yield* serve(upstream)
    const client = yield* connect(url, "sdk-tasks")
    const other = yield* connect(url, "sdk-other")
    assert.isDefined(client.getServerCapabilities()?.tasks)
    const tools: Json = yield* Effect.promise(() => client.listTools())
    const support = new Map(tools.tools.map((t: Json) => [t.name, t.execution?.taskSupport]))
    assert.strictEqual(support.get("slow_compute"), "optional")
    // A 2026-07-28 upstream with the Tasks extension decides per call: each tool takes a task where the client can.
    assert.strictEqual(support.get("failing_job"), upstream === undefined ? "optional" : "required")
    assert.strictEqual(support.get("greet"), upstream === undefined ? "optional" : undefined)

    // To its result, the statuses on the way.
    const messages: Array<Json> = yield* Effect.promise(() =>
      toArrayAsync(
        client.experimental.tasks.callToolStream(
          { name: "slow_compute", arguments: { seconds: 0.05, label: "sdk" } },
          CallToolResultSchema
        )
      )
    )
    assert.strictEqual(messages[0].type, "taskCreated")
    const taskId: string = messages[0].task.taskId
    assert.strictEqual(messages.at(-1).type, "result")
    assert.strictEqual(textOf(messages.at(-1).result), "computed sdk after 0.05 s")
    assert.strictEqual(
      ((yield* Effect.promise(() => client.experimental.tasks.getTask(taskId))) as Json).status,
      "completed"
    )
    const listed: Json = yield* Effect.promise(() => client.experimental.tasks.listTasks())
    assert.deepStrictEqual(
      listed.tasks.map((t: Json) => t.taskId),
      [taskId]
    )

    // Upstream it was a task too, under an id of the upstream's (seen where the upstream lists its tasks).
    if (upstream !== undefined) {
      const made = yield* upstreamTasks(host, (tasks) => tasks.length === 1)
      assert.strictEqual(made[0]!.status, "completed")
      assert.notStrictEqual(made[0]!.taskId, taskId)
    }

    // Another client neither lists, reads nor cancels it.
    const othersList: Json = yield* Effect.promise(() => other.experimental.tasks.listTasks())
    assert.deepStrictEqual(othersList.tasks, [])
    const refused = (attempt: Promise<unknown>) =>
      Effect.promise(() =>
        attempt.then(
          () => "answered",
          (error: Json) => `${error?.code}`
        )
      )
    // As for a task that does not exist (-32602), however it is asked.
    assert.strictEqual(yield* refused(other.experimental.tasks.getTask(taskId)), "-32602")
    assert.strictEqual(yield* refused(other.experimental.tasks.cancelTask(taskId)), "-32602")
    assert.strictEqual(yield* refused(other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)), "-32602")

    // Cancelled downstream, cancelled upstream.
    const stream = client.experimental.tasks.callToolStream(
      { name: "slow_compute", arguments: { seconds: 600, label: "long" } },
      CallToolResultSchema
    )
    const first: Json = yield* Effect.promise(() => stream.next())
    assert.strictEqual(first.value.type, "taskCreated")
    const longId: string = first.value.task.taskId
    const upstreamLong =
      upstream === undefined
        ? undefined
        : (yield* upstreamTasks(host, (tasks) => tasks.some((t) => t.status === "working"))).find(
            (t) => t.status === "working"
          )!
    yield* Effect.promise(() => client.experimental.tasks.cancelTask(longId))
    const cancelled: Json = yield* Effect.promise(() => client.experimental.tasks.getTask(longId))
    assert.strictEqual(cancelled.status, "cancelled")
    yield* Effect.promise(() => stream.return(undefined))
    // The upstream task ends cancelled (the gateway's work sends `tasks/cancel` as it ends).
    if (upstreamLong !== undefined) {
      const ended = yield* (yield* host.tasks("everything")).updates(upstreamLong.taskId).pipe(Stream.runLast)
      assert.strictEqual(ended._tag === "Some" ? ended.value.status : undefined, "cancelled")
    }

    // A tool that fails upstream fails in the gateway's task.
    const failing: Array<Json> = yield* Effect.promise(() =>
      toArrayAsync(
        client.experimental.tasks.callToolStream({ name: "failing_job", arguments: {} }, CallToolResultSchema)
      )
    )
    assert.strictEqual(failing[0].type, "taskCreated")
    // A tool error, as the upstream's task completed with it.
    assert.strictEqual(failing.at(-1).type, "result")
    assert.isTrue(failing.at(-1).result.isError)
  })

describe("gateway tasks: SDK 1.x client -> gateway -> everything server (stdio)", () => {
  it.live(
    "upstream on 2026-07-28 (the Tasks extension): get, list and cancel are the caller's alone",
    () => run(),
    60_000
  )
  it.live("upstream on 2025-11-25: a task upstream too, cancelled with the gateway's", () => run("2025-11-25"), 60_000)
})
