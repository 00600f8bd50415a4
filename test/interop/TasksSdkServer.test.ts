/**
 * The effect-mcp client against the official SDK's 2025-11-25 task server
 * (SDK 1.32.2 `experimental.tasks.registerToolTask`, see sdkTaskServer.ts),
 * a real child process over stdio and over Streamable HTTP on 127.0.0.1: a
 * plain `callTool` of a tool that requires a task gets its result, the
 * tasks API follows a task (statuses, result, list), input the task asks
 * for is answered through `tasks/result`, and interrupting a call cancels
 * its task on the SDK server.
 */
import { fileURLToPath } from "node:url"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import type * as Tools from "@effect-mcp/protocol/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { node, spawnChild, type Watched, waitFor } from "../support/ServerProcess.ts"
import { stdioChild } from "../support/StdioChild.ts"

const fixture = fileURLToPath(new URL("./sdkTaskServer.ts", import.meta.url))

interface Connection {
  readonly client: McpClient.McpClientShape
  readonly stderr: Watched
}

const Elicitation = ElicitationHandler.layer({
  form: () => Effect.succeed({ action: "accept", content: { name: "Ada" } })
})

const connect = <E>(transport: Layer.Layer<Transport.Transport, E>) =>
  Effect.map(
    Layer.build(
      McpClient.layer({ clientInfo: { name: "effect-mcp-tasks-interop", version: "0.1.0" } }).pipe(
        Layer.provide(Layer.merge(transport, Elicitation))
      )
    ),
    (context) => Context.get(context, McpClient.McpClient)
  )

const overStdio: Effect.Effect<Connection, unknown, Scope.Scope> = Effect.suspend(() => {
  const child = stdioChild([fixture, "--stdio"])
  return Effect.map(connect(child.layer), (client) => ({ client, stderr: child.stderr }))
})

const overHttp: Effect.Effect<Connection, unknown, Scope.Scope> = Effect.gen(function* () {
  const child = yield* spawnChild(node, [fixture, "--http"])
  const base = (yield* child.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!
  const client = yield* connect(NodeHttpClient.layerStreamableHttp({ url: `${base}/mcp` }))
  return { client, stderr: child.stderr }
})

const textOf = (result: Tools.CallToolResult): string => {
  const block = result.content[0]
  return block?.type === "text" ? block.text : ""
}

const exercise = (connection: Connection) =>
  Effect.gen(function* () {
    const { client } = connection
    assert.strictEqual(client.revision, "2025-11-25")
    assert.strictEqual(client.tasks.form, "core")

    // A plain call, without listing first: refused as a plain call, then run as a task.
    assert.strictEqual(textOf(yield* client.callTool("build", { target: "first" })), "built first")
    // Listed: called as a task at once; an optional tool is called plainly (the SDK runs it as a task itself).
    const tools = yield* Stream.runCollect(client.tools)
    assert.deepStrictEqual(tools.map((t) => `${t.name}:${t.execution?.taskSupport}`).toSorted(), [
      "ask:required",
      "build:required",
      "maybe:optional",
      "stuck:required"
    ])
    assert.strictEqual(textOf(yield* client.callTool("build", { target: "second" })), "built second")
    assert.strictEqual(textOf(yield* client.callTool("maybe", { target: "third" })), "built third")

    // The tasks API: each new status, then the result.
    const events = yield* Stream.runCollect(client.tasks.run("build", { target: "run" }, { ttl: 30_000 }))
    const statuses = events.flatMap((e) => (e._tag === "Status" ? [e.task.status] : []))
    assert.strictEqual(statuses[0], "working")
    assert.strictEqual(statuses.at(-1), "completed")
    const last = events.at(-1)
    assert.strictEqual(last?._tag === "Result" ? textOf(last.value) : "", "built run")

    const started = yield* client.tasks.callTool("build", { target: "later" })
    assert.strictEqual(started._tag, "Task")
    const taskId = started._tag === "Task" ? started.task.taskId : ""
    // Working for 150 ms, unless the machine is slow.
    assert.include(["working", "completed"], (yield* client.tasks.get(taskId)).status)
    assert.strictEqual(textOf(yield* client.tasks.result(taskId)), "built later")
    const updates = yield* Stream.runCollect(client.tasks.updates(taskId))
    assert.deepStrictEqual(
      updates.map((t) => t.status),
      ["completed"]
    )
    const listed = yield* Stream.runCollect(client.tasks.list)
    assert.isTrue(listed.some((t) => t.taskId === taskId && t.status === "completed"))

    // Input the task asks for: the task turns input_required, `tasks/result` carries the request.
    assert.strictEqual(textOf(yield* client.callTool("ask")), "hello Ada")

    // Interrupting the caller cancels the task on the server.
    const seen = connection.stderr().length
    const after = () => connection.stderr().slice(seen)
    const stuck = yield* Effect.forkChild(client.callTool("stuck"), { startImmediately: true })
    // The client has the task once it reads it back (`tasks/get`/`tasks/result`): interrupting then cancels it.
    const stuckId = (yield* waitFor(after, /followed (\S+)/, undefined, connection.stderr))[1]!
    yield* Fiber.interrupt(stuck)
    yield* waitFor(after, new RegExp(`cancelled ${stuckId}\\b`), undefined, connection.stderr)
  })

describe("interop: McpClient -> SDK 1.32.2 task server (2025-11-25 tasks)", () => {
  it.live("over stdio", () => Effect.flatMap(overStdio, exercise), 30_000)
  it.live("over Streamable HTTP", () => Effect.flatMap(overHttp, exercise), 30_000)
})
