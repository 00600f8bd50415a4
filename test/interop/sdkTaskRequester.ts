/**
 * A server built with the official SDK 1.32.2 that asks its client for a
 * sampling run as a task (2025-11-25, `experimental.tasks.createMessageStream`
 * with `task`), the other peer of the effect-mcp client in
 * TaskReceiverSdk.test.ts. Run with Node over stdio: `node sdkTaskRequester.ts`.
 *
 * Tools:
 * - `summarize`: asks the client's model as a task (ttl 60 s) and answers with
 *   JSON `{ taskId, statuses, text, notified }` (the statuses the SDK polled,
 *   and those the client told it with `notifications/tasks/status`); each polled status is also
 *   printed on stderr as `polled <status>` (what a test's handler waits on);
 * - `abandon`: asks as a task, then, once the client has made it, cancels it
 *   with `tasks/cancel` and answers with JSON `{ cancelled, listed }` (the
 *   cancel's answer and the client's `tasks/list`).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js"

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] })

const params = {
  messages: [{ role: "user" as const, content: { type: "text" as const, text: "summarize" } }],
  maxTokens: 10
}

const server = new McpServer({ name: "sdk-task-requester", version: "1.32.2" }, { capabilities: {} })
const low = server.server
// Every task status notification the client sends, as [taskId, status].
const notified: Array<[string, string]> = []
low.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
  notified.push([notification.params.taskId, notification.params.status])
})

server.registerTool("summarize", { description: "samples as a task" }, async () => {
  const statuses: Array<string> = []
  let taskId = ""
  let answer = ""
  for await (const message of low.experimental.tasks.createMessageStream(params, { task: { ttl: 60_000 } })) {
    if (message.type === "taskCreated") taskId = message.task.taskId
    if (message.type === "taskStatus") {
      statuses.push(message.task.status)
      process.stderr.write(`polled ${message.task.status}\n`)
    }
    if (message.type === "result") {
      const content = message.result.content
      answer = !Array.isArray(content) && content.type === "text" ? content.text : ""
    }
    if (message.type === "error") throw message.error
  }
  return text(JSON.stringify({ taskId, statuses, text: answer, notified: notified.filter(([id]) => id === taskId) }))
})

server.registerTool("abandon", { description: "samples as a task, then cancels it" }, async () => {
  const controller = new AbortController()
  const stream = low.experimental.tasks.createMessageStream(params, { task: {}, signal: controller.signal })
  const first = await stream.next()
  if (first.done === true || first.value.type !== "taskCreated") throw new Error("no task was created")
  const taskId = first.value.task.taskId
  const cancelled = await low.experimental.tasks.cancelTask(taskId)
  controller.abort()
  const listed = await low.experimental.tasks.listTasks()
  return text(JSON.stringify({ cancelled, listed }))
})

await server.connect(new StdioServerTransport())
