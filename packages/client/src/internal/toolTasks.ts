/**
 * Which tool calls run as tasks without the caller asking. On 2025-11-25 a
 * server lists `execution.taskSupport: "required"` on tools that must be
 * called as tasks: learnt from `tools/list` (forgotten when the list
 * changes), such a tool is called as a task and followed to its result.
 * On the Tasks extension the server decides per call; the caller follows the
 * handle it answers with (`Tasks.isTaskHandle`).
 */
import type * as Peer from "@effect-mcp/engine/Peer"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as McpClient from "../McpClient.ts"
import type * as Tasks from "./tasks.ts"

export interface ToolTasks {
  /** Remembers which listed tools require a task. */
  readonly learn: (tools: ReadonlyArray<Tools.Tool>) => void
  /** Forgets everything (the tool list changed). */
  readonly reset: () => void
  /** Sends a `tools/call`, as a task when the tool requires one; the raw result. */
  readonly send: (
    params: { readonly name: string; readonly arguments?: { readonly [key: string]: unknown } | undefined },
    options: McpClient.RequestOptions | undefined,
    onProgress: Peer.CallOptions["onProgress"]
  ) => Effect.Effect<unknown, McpClient.CallError>
}

export const make = (options: {
  /** Whether the server runs tools as tasks (2025-11-25 `tasks.requests.tools.call`). */
  readonly enabled: boolean
  readonly tasks: Tasks.TaskRunner
  readonly request: (
    params: object,
    options: McpClient.RequestOptions | undefined,
    onProgress: Peer.CallOptions["onProgress"]
  ) => Effect.Effect<unknown, McpClient.CallError>
  /** Every tool over all pages (listing them teaches `learn`). */
  readonly tools: () => Stream.Stream<Tools.Tool, McpClient.ListError>
}): ToolTasks => {
  const required = new Set<string>()
  const listed = new Set<string>()

  /**
   * A call of a tool never listed: if the server refused it (-32601, or an
   * `isError` result as some servers answer), the tools are listed, and a
   * tool that requires a task is called as one (a required tool never ran as
   * a plain call, so calling it again is safe).
   */
  const plainOrTask: ToolTasks["send"] = (params, callOptions, onProgress) => {
    const retry = (original: Effect.Effect<unknown, McpClient.CallError>) =>
      Effect.flatMap(Effect.ignore(Stream.runDrain(options.tools())), () =>
        required.has(params.name) ? options.tasks.runCall(params, callOptions) : original
      )
    return Effect.matchEffect(options.request(params, callOptions, onProgress), {
      onFailure: (error) => (error._tag === "MethodNotFound" ? retry(Effect.fail(error)) : Effect.fail(error)),
      onSuccess: (raw) =>
        (raw as { readonly isError?: unknown }).isError === true ? retry(Effect.succeed(raw)) : Effect.succeed(raw)
    })
  }

  return {
    learn: (tools) => {
      if (!options.enabled) return
      for (const tool of tools) {
        listed.add(tool.name)
        if (tool.execution?.taskSupport === "required") required.add(tool.name)
        else required.delete(tool.name)
      }
    },
    reset: () => {
      required.clear()
      listed.clear()
    },
    send: options.enabled
      ? (params, callOptions, onProgress) => {
          if (required.has(params.name)) return options.tasks.runCall(params, callOptions)
          if (!listed.has(params.name)) return plainOrTask(params, callOptions, onProgress)
          return options.request(params, callOptions, onProgress)
        }
      : options.request
  }
}
