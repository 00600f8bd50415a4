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
 * - `stuck`: never completes; prints `cancelled <taskId>` on stderr when its task is cancelled;
 * - `ask`: asks the client for a name (elicitation inside the task), completes with `hello <name>`.
 */
import { randomUUID } from "node:crypto"
import * as Http from "node:http"
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/index.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as z from "zod"

const log = (line: string) => {
  process.stderr.write(`${line}\n`)
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's task handler types are generic over zod shapes; read loosely
type Loose = any

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] })

const make = (): McpServer => {
  const taskStore = new InMemoryTaskStore()
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
        setTimeout(() => void taskStore.storeTaskResult(taskId, "completed", text(`built ${String(args.target)}`)), 150)
      })
    )
  }

  server.experimental.tasks.registerToolTask(
    "stuck",
    { description: "never completes", execution: { taskSupport: "required" } },
    taskTool((taskId) => {
      const watch = setInterval(async () => {
        const now = await taskStore.getTask(taskId)
        if (now?.status === "cancelled") {
          clearInterval(watch)
          log(`cancelled ${taskId}`)
        }
      }, 10)
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

const readBody = (request: Http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (body += chunk))
    request.on("end", () => {
      try {
        resolve(body === "" ? undefined : JSON.parse(body))
      } catch (error) {
        reject(error)
      }
    })
    request.on("error", reject)
  })

const streamableHttp = (): Http.RequestListener => {
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  return async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    if (url.pathname !== "/mcp") return void response.writeHead(404).end()
    const body = request.method === "POST" ? await readBody(request) : undefined
    const id = request.headers["mcp-session-id"]
    const existing = typeof id === "string" ? sessions.get(id) : undefined
    if (existing !== undefined) return existing.handleRequest(request, response, body)
    if (typeof id === "string") return void response.writeHead(404).end()
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport)
      }
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
    }
    await make().connect(transport)
    await transport.handleRequest(request, response, body)
  }
}

const mode = process.argv[2]
if (mode === "--stdio") await make().connect(new StdioServerTransport())
else if (mode === "--http") {
  const listener = streamableHttp()
  const server = Http.createServer((request, response) => {
    Promise.resolve(listener(request, response)).catch((error: unknown) => {
      log(`request failed: ${String(error)}`)
      if (!response.headersSent) response.writeHead(500).end()
    })
  })
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    if (address !== null && typeof address === "object") log(`listening on http://127.0.0.1:${address.port}`)
  })
  const stop = () => {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
} else {
  log("usage: sdkTaskServer.ts --stdio | --http")
  process.exit(2)
}
