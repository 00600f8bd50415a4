/**
 * Tasks through the gateway. A tool its upstream runs as a task (its
 * `execution.taskSupport`) takes tasks downstream as it does upstream, so the
 * gateway's server declares tasks (2025-11-25 `tasks`, the Tasks extension
 * on 2026-07-28) while one does. A downstream call asking for a task is a
 * task of the gateway's own server: its id is the gateway's (unguessable, in
 * the server's task store, retained as the server's tasks are), bound to the
 * principal or session that made it, and `tasks/get`, `tasks/result`,
 * `tasks/list`, `tasks/cancel` are the server's, so no other caller reads,
 * lists or cancels it. The task's work is the upstream call made as a task
 * and followed to its result on the connection the call goes on: the
 * upstream task id lives with that work, the input the upstream task asks
 * for becomes the gateway task's (asks reach the caller as a call's do), and
 * cancelling the gateway task ends the work, which cancels the upstream task.
 * Where both sides speak the Tasks extension the upstream decides, as it
 * would for the client: its result at once answers the call, its task
 * becomes the gateway's (followed by its id).
 *
 * Why a task of the gateway's and not the upstream's id passed through: the
 * downstream session and the upstream connection speak revisions of their
 * own (a 2025-11-25 client's task may be a 2026-07-28 upstream's extension
 * task), an upstream connection is shared by every caller (its `tasks/list`
 * lists them all), and a reconnection makes its task ids mean nothing.
 */
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as Catalog from "@effect-mcp/host/Catalog"
import type * as McpHost from "@effect-mcp/host/McpHost"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolTasks from "@effect-mcp/protocol/Tasks"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Middleware from "@effect-mcp/server/Middleware"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Task from "@effect-mcp/server/Task"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Policy from "../Policy.ts"
import type { Routes } from "./items.ts"
import * as Callers from "./callers.ts"
import * as Rounds from "./rounds.ts"
import { asCaller, hidden, ownClient, passedTool, perCaller, stateless } from "./upstream.ts"

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null

/**
 * How the upstream runs the tool as a task; undefined when never. A 2025-11-25 upstream says it per tool
 * (`execution.taskSupport`); a 2026-07-28 upstream lists no `execution`, and with the Tasks extension decides per
 * call: its tools take tasks where the client can (`optional`).
 */
export const supportOf = (
  routes: Pick<Routes, "extensionTasks">,
  entry: Catalog.Entry<Tools.Tool>
): Exclude<Task.TaskSupport, "forbidden"> | undefined => {
  const support = (entry.item as { readonly execution?: { readonly taskSupport?: unknown } }).execution?.taskSupport
  if (support === "optional" || support === "required") return support
  return routes.extensionTasks.has(entry.server) ? "optional" : undefined
}

/** Those of `servers` whose connection now serves the Tasks extension (a 2026-07-28 upstream declaring it). */
export const extensionUpstreams = (
  host: McpHost.McpHostShape,
  servers: Iterable<string>
): Effect.Effect<ReadonlySet<string>> =>
  Effect.map(
    Effect.forEach([...new Set(servers)], (server) =>
      Effect.gen(function* () {
        // Only a connection that is there now: `client` would wait for one.
        const status = yield* Effect.result(host.status(server))
        if (status._tag === "Failure" || status.success._tag !== "Ready") return undefined
        const client = yield* Effect.result(host.client(server))
        if (client._tag === "Failure" || client.success.tasks.form !== "extension") return undefined
        const extensions = client.success.serverCapabilities.extensions
        return isObject(extensions) && extensions[ProtocolTasks.extensionId] !== undefined ? server : undefined
      })
    ),
    (found) => new Set(found.filter((server): server is string => server !== undefined))
  )

/**
 * Whether a `tools/call` asks for a task as its revision has it: 2025-11-25's
 * `task` parameter, or the Tasks extension a 2026-07-28 request declares (the
 * server decides then; the gateway's tool takes one where its upstream's does).
 */
export const asksForTask = (request: Middleware.Request): boolean => {
  if (request.method !== "tools/call") return false
  const revision = request.info.revision
  if (revision.version === "2025-11-25") return isObject(request.params) && isObject(request.params.task)
  const extensions = request.info.peerCapabilities.extensions
  return revision.stateless && isObject(extensions) && extensions[ProtocolTasks.extensionId] !== undefined
}

/** The requests about one task, by its `taskId`. */
const aboutTask: ReadonlySet<string> = new Set(["tasks/get", "tasks/result", "tasks/cancel", "tasks/update"])

/** Who a request is of: its principal, else its session (a request of neither: anyone with the id). */
const ownerOf = (request: Middleware.Request): string | undefined =>
  request.principal !== undefined
    ? `p:${request.principal.owner}`
    : request.sessionId === undefined
      ? undefined
      : `s:${request.sessionId}`

/** The task id a `tools/call` was answered with (2025-11-25 `{ task }`, the extension's `resultType: "task"`). */
const createdId = (answer: unknown): string | undefined => {
  if (!isObject(answer)) return undefined
  const id = isObject(answer.task) ? answer.task.taskId : answer.resultType === "task" ? answer.taskId : undefined
  return typeof id === "string" ? id : undefined
}

/**
 * Marks each `tools/call` that asks for a task (by its `CurrentRequest`, which
 * the task's work runs with), so the tool's handler calls its upstream as a
 * task; and binds each task made to the session that made it. The server
 * binds a task to an authenticated principal, and otherwise lets its
 * unguessable id stand for its owner (the Tasks extension allows it); a
 * gateway serves many sessions, so a task of a session is answered to that
 * session only (another is told it does not exist). The last `maxTasks`
 * tasks made are bound; an older one is left to the server's rule.
 */
export const guard = (routes: Pick<Routes, "tasked">, maxTasks = 10_000): Middleware.Middleware => {
  const owners = new Map<string, string>()
  return (request, next) => {
    if (asksForTask(request)) {
      const owner = ownerOf(request)
      return Effect.flatMap(CurrentRequest.CurrentRequest, (current) => {
        routes.tasked.add(current)
        if (owner === undefined) return next
        return Effect.tap(next, (answer) =>
          Effect.sync(() => {
            const id = createdId(answer)
            if (id === undefined) return
            if (owners.size >= maxTasks) owners.delete(owners.keys().next().value!)
            owners.set(id, owner)
          })
        )
      })
    }
    if (!aboutTask.has(request.method) || !isObject(request.params)) return next
    const taskId = request.params.taskId
    const owner = typeof taskId === "string" ? owners.get(taskId) : undefined
    if (owner === undefined || owner === ownerOf(request)) return next
    // The server's own answer for a task that does not exist.
    return Effect.fail(
      new McpError.InvalidParams({
        message: `Failed to retrieve task ${JSON.stringify(String(taskId).slice(0, 100))}: Task not found`
      })
    )
  }
}

/** The tasks of the connection a call of `server` goes on (the caller's own, held for `f`, or the host's). */
const withTasks = <A>(
  routes: Routes,
  server: string,
  f: (tasks: McpClient.TasksApi) => Effect.Effect<A, unknown>
): Effect.Effect<A, unknown> =>
  perCaller(routes, server)
    ? Effect.scoped(Effect.flatMap(ownClient(routes, server), (client) => f(client.tasks)))
    : Effect.flatMap(routes.host.tasks(server), f)

/**
 * The call of `entry` made upstream as a task and followed to its result;
 * `plain` when the connection has no tasks (its revision has none).
 */
const followed = <E>(
  routes: Routes,
  entry: Catalog.Entry<Tools.Tool>,
  args: { readonly [key: string]: unknown },
  plain: Effect.Effect<Tools.CallToolResult, E>
): Effect.Effect<Tools.CallToolResult, unknown> =>
  withTasks(
    routes,
    entry.server,
    (tasks): Effect.Effect<Tools.CallToolResult, unknown> =>
      tasks.form === "none"
        ? plain
        : Effect.flatMap(
            Stream.runLast(Stream.filter(tasks.run(entry.item.name, args), (event) => event._tag === "Result")),
            (last) =>
              last._tag === "Some" && last.value._tag === "Result"
                ? Effect.succeed(last.value.value)
                : Effect.die("the upstream task ended without a result")
          )
  )

/** The upstream task `taskId` followed to its result; ending it first cancels the upstream task. */
const resultOf = (routes: Routes, server: string, taskId: string): Effect.Effect<Tools.CallToolResult, unknown> =>
  withTasks(routes, server, (tasks) =>
    tasks.result(taskId).pipe(Effect.onInterrupt(() => Effect.ignore(tasks.cancel(taskId))))
  )

/**
 * `work` run as the current request's (asCaller), its asks (those the work's
 * own fiber answers) asked of that request whoever else waits on the upstream.
 */
const pinned = <A>(
  routes: Routes,
  item: Policy.Item,
  server: string,
  work: Effect.Effect<A, unknown>
): Effect.Effect<A, unknown, CurrentRequest.CurrentRequest | ServerRequest.ServerRequest> =>
  asCaller(routes, item, (request) =>
    Effect.flatMap(Effect.context<never>(), (context) =>
      Effect.flatMap(CurrentRequest.CurrentRequest, (current) =>
        Effect.provideService(work, Callers.Pinned, {
          server,
          caller: { key: current.sessionId ?? request, request, context }
        })
      )
    )
  )

/**
 * `call` (the tool's plain call), or where the downstream call asks for a
 * task, a task of the gateway's whose work is the upstream call made as a
 * task and followed (the handler ends with `Task.background`). First come the
 * refusals a plain call meets before it reaches the upstream: a tool the
 * policy hides from the caller (the answer for a tool that does not exist),
 * an open circuit; both are the call's error, not a task that fails (past its
 * reset time, the circuit's trial is the upstream call). Where both sides
 * speak the Tasks extension, the upstream decides, as it would for the
 * client: its result at once is the call's answer, its task becomes the
 * gateway's.
 */
export const handle = <E, R>(
  routes: Routes,
  item: Policy.Item,
  entry: Catalog.Entry<Tools.Tool>,
  args: { readonly [key: string]: unknown },
  call: Effect.Effect<Tools.CallToolResult, E, R>,
  plain: Effect.Effect<Tools.CallToolResult, unknown>
): Effect.Effect<Tools.CallToolResult, unknown, R | CurrentRequest.CurrentRequest | ServerRequest.ServerRequest> =>
  Effect.flatMap(
    CurrentRequest.CurrentRequest,
    (
      current
    ): Effect.Effect<
      Tools.CallToolResult,
      unknown,
      R | CurrentRequest.CurrentRequest | ServerRequest.ServerRequest
    > => {
      if (!routes.tasked.has(current)) return call
      return Effect.gen(function* () {
        if (routes.policy !== undefined && !routes.policy(item, current.principal)) return yield* hidden(item)
        const breaker = routes.breaker
        const state = breaker?.state(item.upstream)
        if (breaker !== undefined && state?._tag === "Open" && (yield* Clock.currentTimeMillis) < state.until) {
          // Refused by the circuit itself (its error and retry time), which stays as it is.
          yield* breaker.run(item.upstream, Effect.void)
        }
        const request = yield* ServerRequest.ServerRequest
        if (request.stateless && routes.extensionTasks.has(entry.server)) {
          // Passed through as a plain call of a stateless client is (upstream.ts): the upstream's rounds before it
          // makes its task reach the client as they came; then its answer, or its task followed by id.
          const passed = passedTool(entry, args)
          const answer = yield* asCaller(routes, item, (request, current) =>
            stateless(routes, passed, request, current, (client, options) =>
              Effect.map(client.tasks.callTool(entry.item.name, args, options), (start) =>
                start._tag === "Result" ? start.result : { resultType: "task", taskId: start.task.taskId }
              )
            )
          )
          if (answer instanceof Rounds.Round) return yield* Rounds.finish<Tools.CallToolResult>(answer)
          const taskId = createdId(answer)
          if (taskId === undefined) return answer as Tools.CallToolResult
          return yield* Task.background(pinned(routes, item, entry.server, resultOf(routes, entry.server, taskId)))
        }
        return yield* Task.background(pinned(routes, item, entry.server, followed(routes, entry, args, plain)))
      })
    }
  )
