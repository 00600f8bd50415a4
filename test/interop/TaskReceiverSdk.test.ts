/**
 * The effect-mcp client as a task receiver for the official SDK 1.32.2
 * server (a real child process over stdio, see sdkTaskRequester.ts): the SDK
 * asks for a sampling as a task (2025-11-25), our client answers with a task,
 * runs its SamplingHandler as a fiber, serves the SDK's `tasks/get` polls
 * and `tasks/result`, and tells the SDK each new status with
 * `notifications/tasks/status` (read by the SDK's schema); the SDK's `tasks/cancel` interrupts the handler (its
 * finalizer runs) and its `tasks/list` shows the task cancelled. The same
 * through an McpHost that spawns the SDK server (NodeConnector over stdio):
 * the host's `client.taskRequests` reach the connection.
 */
import { fileURLToPath } from "node:url"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import type * as Tools from "@effect-mcp/protocol/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { node, root, waitFor } from "../support/ServerProcess.ts"
import { stdioChild } from "../support/StdioChild.ts"

const fixture = fileURLToPath(new URL("./sdkTaskRequester.ts", import.meta.url))

const textOf = (result: Tools.CallToolResult): string => {
  const block = result.content[0]
  return block?.type === "text" ? block.text : ""
}

describe("the SDK 1.32.2 server asks our client for a sampling run as a task", () => {
  it.live(
    "task created, polled, result read; cancelled by tasks/cancel (the handler's finalizer runs); tasks/list",
    () =>
      Effect.gen(function* () {
        const finalized = yield* Deferred.make<void>()
        let calls = 0
        const child = stdioChild([fixture])
        const sampling = SamplingHandler.layer(() =>
          // The first run works until the SDK has polled it and read "working"; the second never ends and is cancelled.
          ++calls === 1
            ? Effect.as(Effect.orDie(waitFor(child.stderr, /^polled working$/m)), {
                role: "assistant" as const,
                content: { type: "text" as const, text: "a summary" },
                model: "m"
              })
            : Effect.never.pipe(Effect.ensuring(Deferred.succeed(finalized, undefined)))
        )
        const context = yield* Layer.build(
          McpClient.layer({
            clientInfo: { name: "effect-mcp-task-receiver", version: "0.1.0" },
            taskRequests: { sampling: true, pollIntervalMs: 50 }
          }).pipe(Layer.provide(Layer.merge(child.layer, sampling)))
        )
        const client = Context.get(context, McpClient.McpClient)
        assert.strictEqual(client.revision, "2025-11-25")

        const summary = JSON.parse(textOf(yield* client.callTool("summarize")))
        assert.strictEqual(summary.text, "a summary", child.stderr())
        assert.isString(summary.taskId)
        // Polled at our interval while it worked, then completed.
        assert.isAbove(summary.statuses.length, 1)
        assert.strictEqual(summary.statuses.at(-1), "completed")
        assert.isTrue(summary.statuses.slice(0, -1).every((s: string) => s === "working"))
        // The completion was also told (before tasks/result was answered, so the SDK has it by then).
        assert.deepStrictEqual(summary.notified, [[summary.taskId, "completed"]])

        const abandoned = JSON.parse(textOf(yield* client.callTool("abandon")))
        assert.strictEqual(abandoned.cancelled.status, "cancelled", child.stderr())
        yield* Deferred.await(finalized).pipe(Effect.timeout("5 seconds"))
        assert.deepStrictEqual(
          abandoned.listed.tasks.map((t: { readonly taskId: string; readonly status: string }) => [t.taskId, t.status]),
          [
            [summary.taskId, "completed"],
            [abandoned.cancelled.taskId, "cancelled"]
          ]
        )
      }),
    30_000
  )

  it.live(
    "through McpHost (a spawned stdio server): the host's clients take the SDK's sampling as a task",
    () =>
      Effect.gen(function* () {
        const sampling = SamplingHandler.layer(() =>
          // Simulated work, so the SDK sees the task working first; nothing here waits on it.
          Effect.as(Effect.sleep("200 millis"), {
            role: "assistant" as const,
            content: { type: "text" as const, text: "hosted" },
            model: "m"
          })
        )
        const context = yield* Layer.build(
          McpHost.layer({
            clientInfo: { name: "effect-mcp-host", version: "0.1.0" },
            config: { mcpServers: { sdk: { command: node, args: [fixture], cwd: root } } },
            client: { taskRequests: { sampling: true, pollIntervalMs: 50 } },
            healthCheck: false
          }).pipe(Layer.provide(Layer.merge(NodeConnector.layer(), sampling)))
        )
        const host = Context.get(context, McpHost.McpHost)
        const ready = yield* host.awaitReady("sdk")
        assert.deepStrictEqual(ready.clientCapabilities.tasks, {
          list: {},
          cancel: {},
          requests: { sampling: { createMessage: {} } }
        })
        const summary = JSON.parse(textOf(yield* host.callTool("sdk__summarize")))
        assert.strictEqual(summary.text, "hosted")
        assert.strictEqual(summary.statuses.at(-1), "completed")
        assert.deepStrictEqual(summary.notified, [[summary.taskId, "completed"]])
      }),
    30_000
  )
})
