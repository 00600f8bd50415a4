/**
 * Experimental tasks (2025-11-25 only): a tool call run as a task answers at
 * once with the task; the client polls `tasks/get`, fetches the outcome with
 * `tasks/result`, lists and cancels. Refused locally on other revisions and
 * when the server did not declare the matching `tasks` capability.
 */
import * as PeerError from "@effect-mcp/engine/PeerError"
import * as Features from "@effect-mcp/protocol/Features"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as Tools from "@effect-mcp/protocol/Tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as McpClient from "../McpClient.ts"
import * as Decode from "./decode.ts"
import type * as Hub from "./hub.ts"
import * as Paging from "./paging.ts"

const decodeCreateTask = Decode.decoder("tools/call", Tasks.CreateTaskResult)
const decodeGetTask = Decode.decoder("tasks/get", Tasks.GetTaskResult)
const decodeToolResult = Decode.decoder("tasks/result", Tools.CallToolResult)
const decodeListTasks = Decode.decoder("tasks/list", Tasks.ListTasksResult)
const decodeCancelTask = Decode.decoder("tasks/cancel", Tasks.CancelTaskResult)
const decodeStatus = Schema.decodeUnknownOption(Tasks.TaskStatusParams)

export const make = (options: {
  readonly version: ProtocolVersion.ProtocolVersion
  readonly declares: (path: ReadonlyArray<string>) => boolean
  readonly request: (
    method: string,
    params: object | undefined,
    options?: McpClient.RequestOptions
  ) => Effect.Effect<unknown, McpClient.CallError>
  readonly notifications: (methods: ReadonlySet<string>) => Stream.Stream<Hub.Notification>
  readonly maxPages: number
}): McpClient.TasksApi => {
  const inRevision = Features.has(options.version, "tasks")
  const gate = <A, E>(method: string, path: ReadonlyArray<string>, effect: Effect.Effect<A, E>) => {
    if (!inRevision) {
      return Effect.fail(
        new PeerError.NotSupported({
          method,
          reason: "MethodNotInRevision",
          detail: `revision ${options.version} has no tasks`
        })
      )
    }
    if (!options.declares(path)) {
      return Effect.fail(
        new PeerError.NotSupported({
          method,
          reason: "CapabilityNotDeclared",
          detail: `the server did not declare ${path.join(".")}`
        })
      )
    }
    return effect
  }
  const list = (cursor: string | undefined) =>
    gate(
      "tasks/list",
      ["tasks", "list"],
      Effect.flatMap(options.request("tasks/list", cursor === undefined ? {} : { cursor }), decodeListTasks)
    )
  return {
    callTool: (name, args, callOptions) => {
      const { ttl, ...rest } = callOptions ?? {}
      const params = {
        name,
        ...(args === undefined ? {} : { arguments: args }),
        task: ttl === undefined ? {} : { ttl }
      }
      return gate(
        "tools/call",
        ["tasks", "requests", "tools", "call"],
        Effect.flatMap(options.request("tools/call", params, rest), decodeCreateTask)
      )
    },
    get: (taskId) =>
      gate("tasks/get", ["tasks"], Effect.flatMap(options.request("tasks/get", { taskId }), decodeGetTask)),
    toolResult: (taskId, callOptions) =>
      gate(
        "tasks/result",
        ["tasks"],
        Effect.flatMap(options.request("tasks/result", { taskId }, callOptions), decodeToolResult)
      ),
    list: Paging.stream({
      method: "tasks/list",
      maxPages: options.maxPages,
      fetch: (cursor) => Effect.map(list(cursor), (r) => ({ items: r.tasks, nextCursor: r.nextCursor }))
    }),
    cancel: (taskId) =>
      gate(
        "tasks/cancel",
        ["tasks", "cancel"],
        Effect.flatMap(options.request("tasks/cancel", { taskId }), decodeCancelTask)
      ),
    status: options
      .notifications(new Set(["notifications/tasks/status"]))
      .pipe(
        Stream.filterMap((n) =>
          Option.match(decodeStatus(n.params), { onNone: () => Result.failVoid, onSome: Result.succeed })
        )
      )
  }
}
