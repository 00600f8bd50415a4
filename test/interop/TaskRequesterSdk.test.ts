/**
 * effect-mcp's server asks the official SDK 1.32.2 `Client` (in this
 * process, over real Streamable HTTP on 127.0.0.1) for a sampling run as a
 * task (2025-11-25): the SDK client declares
 * `tasks.requests.sampling.createMessage` and keeps its tasks in its
 * `InMemoryTaskStore`; our tool's `Sampling.createMessage(..., { task })`
 * sends the request with `task`, polls the SDK's `tasks/get` and reads its
 * `tasks/result`, and the tool's handler gets the answer as from a plain ask.
 * The SDK's task store tells the task's status with `notifications/tasks/status`
 * when its result is stored: our ask reads it then, not a poll interval later.
 */
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/index.js"
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const Server = Tool.layer(
  Tool.make("summarize", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.map(
        Sampling.createMessage(
          { messages: [{ role: "user", content: { type: "text", text: "summarize" } }], maxTokens: 10 },
          { task: { ttl: 60_000 } }
        ),
        Sampling.text
      )
  })
).pipe(Layer.provideMerge(McpServer.layer({ name: "effect-mcp-asker", version: "1.0.0" })))

/** The SDK 1.32.2 client as a task receiver whose tasks suggest `pollInterval` and complete after 200 ms. */
const sdkReceiver = (pollInterval: number) => {
  const taskStore = new InMemoryTaskStore()
  const created: Array<{ readonly taskId: string; readonly ttl: number | null }> = []
  const plain: Array<unknown> = []
  const client = new Client(
    { name: "sdk-task-receiver", version: "1.32.2" },
    {
      capabilities: { sampling: {}, tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} } } } },
      taskStore
    }
  )
  const answer = {
    role: "assistant" as const,
    content: { type: "text" as const, text: "an SDK summary" },
    model: "sdk"
  }
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    if (request.params.task === undefined) {
      plain.push(request.params)
      return answer
    }
    const task = await extra.taskStore!.createTask({ ttl: request.params.task.ttl ?? null, pollInterval })
    created.push({ taskId: task.taskId, ttl: task.ttl })
    // Storing the result also sends notifications/tasks/status (the SDK's request task store does). Simulated
    // work: the task completes after it was answered as created; nothing in the test waits on this timer.
    setTimeout(() => void extra.taskStore!.storeTaskResult(task.taskId, "completed", answer), 200)
    return { task }
  })
  return { client, taskStore, created, plain }
}

const serve = Effect.gen(function* () {
  const context = yield* Layer.build(NodeMcpServer.layerHttp(Server, { host: "127.0.0.1" }))
  return `${yield* Effect.provideContext(NodeMcpServer.url, context)}/mcp`
})

const connected = (client: Client, url: string) =>
  Effect.acquireRelease(
    Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
    () => Effect.promise(() => client.close())
  )

describe("our server asks the SDK 1.32.2 client for a sampling run as a task", () => {
  it.live(
    "a minute between polls: the SDK's status notification has our ask read the result at once",
    () =>
      Effect.gen(function* () {
        const url = yield* serve
        const { client, created } = sdkReceiver(60_000)
        yield* connected(client, url)
        const started = Date.now()
        const result = yield* Effect.promise(() => client.callTool({ name: "summarize", arguments: {} }))
        assert.deepStrictEqual(result.content, [{ type: "text", text: "an SDK summary" }])
        assert.strictEqual(created.length, 1)
        // Done 200 ms in, heard at once: well before the first poll would have been sent.
        assert.isBelow(Date.now() - started, 10_000)
      }),
    30_000
  )

  it.live(
    "the SDK client makes the task, our server polls tasks/get and reads tasks/result",
    () =>
      Effect.gen(function* () {
        const url = yield* serve
        // Polled every 50 ms.
        const { client, taskStore, created, plain } = sdkReceiver(50)
        yield* connected(client, url)
        const result = yield* Effect.promise(() => client.callTool({ name: "summarize", arguments: {} }))
        assert.deepStrictEqual(result.content, [{ type: "text", text: "an SDK summary" }])
        assert.strictEqual(plain.length, 0)
        assert.strictEqual(created.length, 1)
        assert.strictEqual(created[0]!.ttl, 60_000)
        const stored = yield* Effect.promise(() => taskStore.getTask(created[0]!.taskId))
        assert.strictEqual(stored?.status, "completed")
      }),
    30_000
  )
})
