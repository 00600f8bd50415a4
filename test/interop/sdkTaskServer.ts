/**
 * A task server built with the official SDK 1.32.2 (`McpServer` with its
 * experimental 2025-11-25 tasks: `experimental.tasks.registerToolTask` and
 * `InMemoryTaskStore`), the other peer of the effect-mcp client in
 * TasksSdkServer.test.ts. Run with Node (types are stripped as it loads):
 *
 *   node sdkTaskServer.ts --stdio     stdio
 *   node sdkTaskServer.ts --http      Streamable HTTP at /mcp (sessions on), 127.0.0.1, a free port,
 *                                     `listening on <base url>` on stderr
 *
 * Tools (all `taskSupport: "required"` but `maybe`):
 * - `build {target}`: completes after 150 ms with `built <target>`, polled every 50 ms;
 * - `maybe {target}`: the same, `taskSupport: "optional"`;
 * - `stuck`: never completes; prints `followed <taskId>` on stderr when a client first reads its task
 *   (`tasks/get` or `tasks/result`: the client has the task and follows it) and `cancelled <taskId>`
 *   when the task is cancelled;
 * - `ask`: asks the client for a name (elicitation inside the task), completes with `hello <name>`.
 */
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/index.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as z from "zod"
import { listen, log, streamableHttp } from "../support/SdkHttpServer.ts"

// biome-ignore lint/suspicious/noExplicitAny: the SDK's task handler types are generic over zod shapes; read loosely
type Loose = any

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] })

/**
 * The SDK's in-memory store, telling its listeners of each status it stores (a cancellation among them)
 * and of each read (only a client's `tasks/get`, `tasks/result` and `tasks/cancel` read a task here).
 */
class WatchedTaskStore extends InMemoryTaskStore {
  readonly listeners = new Set<(taskId: string, event: string) => void>()
  override async updateTaskStatus(...args: Parameters<InMemoryTaskStore["updateTaskStatus"]>): Promise<void> {
    await super.updateTaskStatus(...args)
    for (const listener of [...this.listeners]) listener(args[0], args[1])
  }
  override getTask(...args: Parameters<InMemoryTaskStore["getTask"]>): ReturnType<InMemoryTaskStore["getTask"]> {
    for (const listener of [...this.listeners]) listener(args[0], "read")
    return super.getTask(...args)
  }
}

const make = (): McpServer => {
  const taskStore = new WatchedTaskStore()
  const server = new McpServer(
    { name: "sdk-task-server", version: "1.32.2" },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue()
    }
  )
  // A task handler whose work `start` begins in the background once the task exists (polled every 50 ms).
  const taskTool = (start: (taskId: string, args: { readonly [key: string]: unknown }) => void): Loose => ({
    createTask: async (...params: Array<Loose>) => {
      const extra = params[params.length - 1]
      const args = params.length > 1 ? params[0] : {}
      const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60_000, pollInterval: 50 })
      start(task.taskId, args)
      return { task }
    },
    getTask: async (...params: Array<Loose>) => {
      const extra = params[params.length - 1]
      return extra.taskStore.getTask(extra.taskId)
    },
    getTaskResult: async (...params: Array<Loose>) => {
      const extra = params[params.length - 1]
      return extra.taskStore.getTaskResult(extra.taskId)
    }
  })

  for (const [name, taskSupport] of [
    ["build", "required"],
    ["maybe", "optional"]
  ] as const) {
    server.experimental.tasks.registerToolTask(
      name,
      { description: `builds (${taskSupport})`, inputSchema: { target: z.string() }, execution: { taskSupport } },
      taskTool((taskId, args) => {
        // Simulated work: the task stays "working" for a while so the client polls it; nothing waits on this.
        setTimeout(() => void taskStore.storeTaskResult(taskId, "completed", text(`built ${String(args.target)}`)), 150)
      })
    )
  }

  server.experimental.tasks.registerToolTask(
    "stuck",
    { description: "never completes", execution: { taskSupport: "required" } },
    taskTool((taskId) => {
      let followed = false
      const onEvent = (id: string, event: string) => {
        if (id !== taskId) return
        if (event === "read" && !followed) {
          followed = true
          log(`followed ${taskId}`)
        }
        if (event !== "cancelled") return
        taskStore.listeners.delete(onEvent)
        log(`cancelled ${taskId}`)
      }
      taskStore.listeners.add(onEvent)
    })
  )

  server.experimental.tasks.registerToolTask(
    "ask",
    { description: "asks for a name", execution: { taskSupport: "required" } },
    taskTool((taskId) => {
      void (async () => {
        try {
          // As the SDK does for a request sent from a task's handler: the task waits for input, and the request
          // is queued for the client's `tasks/result` (not sent on the connection by itself).
          await taskStore.updateTaskStatus(taskId, "input_required")
          const stream = server.server.experimental.tasks.elicitInputStream(
            {
              mode: "form",
              message: "your name?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
            },
            { relatedTask: { taskId } }
          )
          let name = "nobody"
          for await (const message of stream) {
            if (message.type === "result" && message.result.action === "accept")
              name = String(message.result.content?.name)
            if (message.type === "error") throw message.error
          }
          await taskStore.updateTaskStatus(taskId, "working")
          await taskStore.storeTaskResult(taskId, "completed", text(`hello ${name}`))
        } catch (error) {
          await taskStore.storeTaskResult(taskId, "failed", text(String(error)))
        }
      })()
    })
  )
  return server
}

const mode = process.argv[2]
if (mode === "--stdio") await make().connect(new StdioServerTransport())
else if (mode === "--http") listen(streamableHttp(make))
else {
  log("usage: sdkTaskServer.ts --stdio | --http")
  process.exitCode = 2
}
