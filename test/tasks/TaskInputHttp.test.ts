/**
 * 2025-11-25 input of a task over real Streamable HTTP: a client that
 * observes `input_required` calls `tasks/result`, and the task's request to
 * it (an elicitation, with `related-task` in `_meta`) arrives on that
 * request's SSE stream; the client answers it with a POST, and the same
 * stream then carries the task's result.
 */
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Json, post } from "./rpc.ts"

const Confirm = Tool.make("confirm", {
  input: Schema.Struct({}),
  taskSupport: "required",
  handler: () =>
    Effect.map(Elicitation.form({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) }), (answer) =>
      answer.action === "accept" ? `Hello, ${answer.content.name}` : answer.action
    )
})

const Server = Tool.layer(Confirm).pipe(Layer.provideMerge(McpServer.layer({ name: "ask", version: "1.0.0" })))

/** Reads JSON-RPC messages off an SSE response as they arrive. */
const messages = (response: Response) => {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  return async (): Promise<Json> => {
    for (;;) {
      const end = buffer.indexOf("\n")
      if (end >= 0) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 1)
        // Events without data (a stream's priming event) carry no message.
        if (line.startsWith("data:") && line.slice(5).trim() !== "") return JSON.parse(line.slice(5))
        continue
      }
      const { value, done } = await reader.read()
      if (done) throw new Error("the stream ended")
      buffer += value
    }
  }
}

describe("2025-11-25 task input over Streamable HTTP", () => {
  it.live("the task's elicitation travels on the tasks/result stream, which then carries the result", () =>
    Effect.gen(function* () {
      const server = yield* Layer.build(NodeMcpServer.layerHttp(Server, { host: "127.0.0.1" }))
      const url = `${yield* Effect.provideContext(NodeMcpServer.url, server)}/mcp`
      const init = yield* Effect.promise(() =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: { elicitation: {} },
              clientInfo: { name: "ask", version: "1" }
            }
          })
        })
      )
      yield* Effect.promise(() => init.text())
      const headers = { "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-11-25" }
      yield* post(url, headers, { jsonrpc: "2.0", method: "notifications/initialized" })
      const call = yield* Effect.promise(() =>
        fetch(url, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "confirm", arguments: {}, task: {} }
          })
        })
      )
      const created = yield* Effect.promise(messages(call))
      const taskId: string = created.result.task.taskId

      const waiting = yield* Effect.promise(() =>
        fetch(url, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } })
        })
      )
      const next = messages(waiting)
      const ask = yield* Effect.promise(next)
      assert.strictEqual(ask.method, "elicitation/create")
      assert.deepStrictEqual(ask.params._meta["io.modelcontextprotocol/related-task"], { taskId })
      yield* post(url, headers, { jsonrpc: "2.0", id: ask.id, result: { action: "accept", content: { name: "Ada" } } })
      const result = yield* Effect.promise(next)
      assert.strictEqual(result.id, 2)
      assert.deepStrictEqual(result.result.content, [{ type: "text", text: "Hello, Ada" }])
    }).pipe(Effect.scoped)
  )
})
