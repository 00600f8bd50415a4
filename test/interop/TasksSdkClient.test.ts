/**
 * Official clients against effect-mcp's task server, over Streamable HTTP on
 * 127.0.0.1 (the server in this process, so a test sees its tools' fibers):
 * the SDK 1.32.2 `Client`'s experimental 2025-11-25 tasks
 * (`experimental.tasks.callToolStream`, `getTask`, `listTasks`,
 * `cancelTask`), and `@modelcontextprotocol/ext-tasks` 0.2.2 on the SDK 2.4
 * `Client` (`createTaskSessionFromClient`: `callTool`, `settle`, `cancel`)
 * on 2025-11-25 and on 2026-07-28 (the Tasks extension). Cancelling a task
 * interrupts its fiber on our server.
 */
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool
} from "@modelcontextprotocol/ext-tasks/client"
import {
  Client as Client2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransport2
} from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { toArrayAsync } from "@modelcontextprotocol/sdk/experimental/tasks/index.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// biome-ignore lint/suspicious/noExplicitAny: results are read by path; the assertions are the type check
type Json = any

const textOf = (result: Json): string => result?.content?.[0]?.text ?? ""

/**
 * ext-tasks' `rawDispatch` for a 2026-07-28 session: the SDK Client does not
 * send the extension's wire shapes itself, so each framed request is POSTed
 * as the stateless revision has it (one request per POST, the `Mcp-Method`
 * and `Mcp-Name` headers), its answer read from JSON or from the SSE stream.
 */
const rawDispatch =
  (url: string) =>
  async (request: Json): Promise<Json> => {
    const id = Math.floor(Math.random() * 1e9)
    const params = request.params ?? {}
    const name = request.method === "tools/call" ? params.name : params.taskId
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": request.method,
        ...(typeof name === "string" ? { "mcp-name": name } : {})
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, ...request })
    })
    const body = await response.text()
    const messages: Array<Json> = (response.headers.get("content-type") ?? "").includes("text/event-stream")
      ? body
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => JSON.parse(line.slice(5)))
      : [JSON.parse(body)]
    const answer = messages.find((m) => m.id === id)
    return answer.error === undefined
      ? { kind: "result", result: answer.result }
      : { kind: "error", error: answer.error }
  }

/** Our server: `build` (required, 300 ms), `maybe` (optional), `stuck` (required, until cancelled). */
const serve = Effect.gen(function* () {
  const stuckStarted = yield* Deferred.make<void>()
  const stuckFinalized = yield* Deferred.make<void>()
  const build = (name: string, taskSupport: "required" | "optional") =>
    Tool.make(name, {
      description: `builds a target (${taskSupport} task)`,
      input: Schema.Struct({ target: Schema.String }),
      taskSupport,
      // Simulated work, so the task is seen working first; no assertion depends on how long it takes.
      handler: ({ target }) => Effect.as(Effect.sleep("300 millis"), `built ${target}`)
    })
  const stuck = Tool.make("stuck", {
    description: "runs until cancelled",
    input: Schema.Struct({}),
    taskSupport: "required",
    handler: () =>
      Effect.andThen(Deferred.succeed(stuckStarted, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Deferred.succeed(stuckFinalized, undefined))
      )
  })
  const Server = Tool.layer(build("build", "required"), build("maybe", "optional"), stuck).pipe(
    Layer.provideMerge(McpServer.layer({ name: "effect-mcp-tasks", version: "1.0.0" }))
  )
  const context = yield* Layer.build(NodeMcpServer.layerHttp(Server, { host: "127.0.0.1" }))
  const url = `${yield* Effect.provideContext(NodeMcpServer.url, context)}/mcp`
  return { url, stuckStarted, stuckFinalized }
})

/** An ext-tasks session runs `build` as a task to its result, then cancels `stuck`, whose fiber is interrupted. */
const settleAndCancel = (
  session: ReturnType<typeof createTaskSessionFromClient>,
  served: Effect.Success<typeof serve>,
  target: string
) =>
  Effect.gen(function* () {
    yield* Effect.addFinalizer(() => Effect.promise(() => session.close()))
    const execution = yield* Effect.promise(() => session.callTool("build", { target }))
    assert.strictEqual(execution.kind, "task")
    const { outcome } = yield* Effect.promise(() => execution.settle())
    assert.strictEqual(outcome.status, "completed")
    assert.strictEqual(textOf(resultFromTaskOutcome(outcome)), `built ${target}`)

    const stuck = yield* Effect.promise(() => session.callTool("stuck", {}))
    assert.strictEqual(stuck.kind, "task")
    yield* Deferred.await(served.stuckStarted)
    yield* Effect.promise(() => stuck.cancel())
    yield* Deferred.await(served.stuckFinalized).pipe(Effect.timeout("5 seconds"))
  })

describe("interop: official clients -> effect-mcp task server", () => {
  it.live(
    "SDK 1.32.2 Client, experimental 2025-11-25 tasks: stream, get, list, cancel",
    () =>
      Effect.gen(function* () {
        const { url, stuckStarted, stuckFinalized } = yield* serve
        const client = new Client({ name: "sdk-tasks", version: "1.32.2" })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
          () => Effect.promise(() => client.close())
        )
        const tools = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(tools.tools.map((t: Json) => `${t.name}:${t.execution?.taskSupport}`).toSorted(), [
          "build:required",
          "maybe:optional",
          "stuck:required"
        ])
        const messages: Array<Json> = yield* Effect.promise(() =>
          toArrayAsync(
            client.experimental.tasks.callToolStream(
              { name: "build", arguments: { target: "sdk" } },
              CallToolResultSchema
            )
          )
        )
        assert.strictEqual(messages[0].type, "taskCreated")
        const taskId: string = messages[0].task.taskId
        assert.strictEqual(messages.at(-1).type, "result")
        assert.strictEqual(textOf(messages.at(-1).result), "built sdk")
        const statuses = messages.filter((m) => m.type === "taskStatus").map((m) => m.task.status)
        assert.strictEqual(statuses.at(-1), "completed")

        const got: Json = yield* Effect.promise(() => client.experimental.tasks.getTask(taskId))
        assert.strictEqual(got.status, "completed")
        const listed: Json = yield* Effect.promise(() => client.experimental.tasks.listTasks())
        assert.isTrue(listed.tasks.some((t: Json) => t.taskId === taskId))

        // An optional tool called plainly answers plainly.
        const plain: Json = yield* Effect.promise(() =>
          client.callTool({ name: "maybe", arguments: { target: "now" } })
        )
        assert.strictEqual(textOf(plain), "built now")

        // Cancelling a task interrupts its fiber.
        const stream = client.experimental.tasks.callToolStream({ name: "stuck", arguments: {} }, CallToolResultSchema)
        const first: Json = yield* Effect.promise(() => stream.next())
        assert.strictEqual(first.value.type, "taskCreated")
        yield* Deferred.await(stuckStarted)
        yield* Effect.promise(() => client.experimental.tasks.cancelTask(first.value.task.taskId))
        yield* Deferred.await(stuckFinalized).pipe(Effect.timeout("5 seconds"))
        const cancelled: Json = yield* Effect.promise(() => client.experimental.tasks.getTask(first.value.task.taskId))
        assert.strictEqual(cancelled.status, "cancelled")
        yield* Effect.promise(() => stream.return(undefined))
      }),
    30_000
  )

  it.live(
    "@modelcontextprotocol/ext-tasks on the SDK 2.4 Client (2025-11-25): callTool, settle, cancel",
    () =>
      Effect.gen(function* () {
        const served = yield* serve
        const { url } = served
        const client = new Client2({ name: "ext-tasks", version: "0.2.2" })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StreamableHTTPClientTransport2(new URL(url)))),
          () => Effect.promise(() => client.close())
        )
        const listed = yield* Effect.promise(() => client.listTools())
        const declarations = new Map(listed.tools.map((tool) => [tool.name, toolDeclarationFromMcpTool(tool)]))
        const session = createTaskSessionFromClient(client, {
          endpointId: "effect-mcp-tasks",
          tools: { currentTool: (name) => declarations.get(name) }
        })
        yield* settleAndCancel(session, served, "ext")
      }),
    30_000
  )

  it.live(
    "@modelcontextprotocol/ext-tasks on the SDK 2.4 Client (2026-07-28, the Tasks extension): callTool, settle, cancel",
    () =>
      Effect.gen(function* () {
        const served = yield* serve
        const { url } = served
        const clientInfo = { name: "ext-tasks", version: "0.2.2" }
        const client = new Client2(clientInfo, { versionNegotiation: { mode: { pin: "2026-07-28" } } })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StreamableHTTPClientTransport2(new URL(url)))),
          () => Effect.promise(() => client.close())
        )
        assert.strictEqual(client.getProtocolEra(), "modern")
        const session = createTaskSessionFromClient(client, {
          endpointId: "effect-mcp-tasks-v2",
          rawDispatch: rawDispatch(url),
          v2RequestFraming: {
            protocolVersion: "2026-07-28",
            clientInfo,
            clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } }
          }
        })
        yield* settleAndCancel(session, served, "v2")
      }),
    30_000
  )
})
