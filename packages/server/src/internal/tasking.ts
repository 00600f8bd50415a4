/**
 * Tasks as the protocol sees them: whether a `tools/call` runs as a task
 * (the tool's `taskSupport` against what the request can take), the answer
 * that starts one, and the `tasks/*` handlers of both forms: 2025-11-25
 * (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`) and the
 * SEP-2663 extension on 2026-07-28 (`tasks/get`, `tasks/update`,
 * `tasks/cancel`, refused with -32021 to a request that did not declare it).
 *
 * Who may read a task: the authenticated principal that made it; without
 * authentication its unguessable id is the credential (SEP-2663 allows it),
 * and `tasks/list` shows a session only the tasks it made.
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Tasks from "@effect-mcp/protocol/Tasks"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as TaskStore from "../TaskStore.ts"
import type * as Tool from "../Tool.ts"
import * as Ask from "./ask.ts"
import { declared } from "./capabilities.ts"
import { type Obj, paramsOf } from "./params.ts"
import type { State } from "./server.ts"
import * as Runtime from "./tasks.ts"

const missingExtension = (method: string) =>
  new McpError.MissingRequiredClientCapability({
    message: `${method}: the client did not declare the ${Tasks.extensionId} extension`,
    data: { requiredCapabilities: { extensions: { [Tasks.extensionId]: {} } } }
  })

/** Whether the request declared the Tasks extension (2026-07-28: in its per-request capabilities). */
const extensionDeclared = (info: Session.RequestInfo): boolean =>
  declared(info.peerCapabilities, ["extensions", Tasks.extensionId])

/** Whether the revision has the 2025-11-25 core tasks. */
const coreTasks = (info: Session.RequestInfo): boolean => info.revision.version === "2025-11-25"

/**
 * How a call of `tool` runs: `"task"` where the tool takes tasks and the
 * request can take one, `"sync"` otherwise, or the error refusing it.
 */
export const modeOf = (
  info: Session.RequestInfo,
  p: Obj,
  tool: Tool.Tool<unknown>
): "sync" | "task" | McpError.McpError => {
  const support = tool.taskSupport ?? "forbidden"
  if (coreTasks(info)) {
    const requested = Predicate.isObject(p.task)
    if (requested && support === "forbidden") {
      return new McpError.MethodNotFound({ message: `tools/call: tool ${tool.name} does not support task execution` })
    }
    if (!requested && support === "required") {
      return new McpError.MethodNotFound({ message: `tools/call: tool ${tool.name} must be called as a task` })
    }
    return requested ? "task" : "sync"
  }
  if (info.revision.stateless) {
    // The extension ignores a legacy `task` parameter: the server alone decides.
    if (support === "forbidden") return "sync"
    if (extensionDeclared(info)) return "task"
    return support === "required" ? missingExtension(`tools/call: tool ${tool.name}`) : "sync"
  }
  return "sync"
}

// Tasks made by a session without a principal, listed by `tasks/list` to that session only.
const sessionKeys = new WeakMap<Session.SessionShape, string>()
/**
 * An HTTP session is known by its `Mcp-Session-Id`, the same on every process
 * that serves it: a session that moved to another process of a cluster (its
 * owner lost) still lists the tasks it made. Any other session gets a random key.
 */
const sessionKey = (session: Session.SessionShape): Effect.Effect<string> =>
  Effect.map(CurrentRequest.sessionId, (id) => {
    if (id !== undefined) return `s:${id}`
    let key = sessionKeys.get(session)
    if (key === undefined) {
      key = `s:${SecureRandom.uuidV4Unsafe()}`
      sessionKeys.set(session, key)
    }
    return key
  })

/** The principal key of the request, if it was authenticated. */
const principalOf: Effect.Effect<string | undefined> = Effect.map(CurrentRequest.principal, (principal) =>
  principal === undefined ? undefined : `p:${principal.owner}`
)

/** Starts `outcome` as a task of the request and returns the answer that carries it. */
export const start = Effect.fnUntraced(function* (
  server: State,
  session: Session.SessionShape | undefined,
  info: Session.RequestInfo,
  context: Context.Context<never>,
  outcome: Effect.Effect<object, McpError.McpError>
): Effect.fn.Return<object, McpError.McpError> {
  const runtime = server.tasks()
  const principal = yield* principalOf
  const stateful = !info.revision.stateless && session !== undefined
  const owner = principal ?? (stateful ? yield* sessionKey(session) : "")
  const p = paramsOf(info.request.params)
  const requested = Predicate.isObject(p.task) ? (p.task as Obj).ttl : undefined
  const record = yield* runtime.start(
    {
      owner,
      method: info.request.method,
      ttlMs: typeof requested === "number" && coreTasks(info) ? requested : undefined,
      revision: info.revision,
      clientCapabilities: info.peerCapabilities,
      clientInfo: info.peerInfo,
      session: stateful ? session : undefined,
      prepareAsk: (method, params) => {
        const shaped = Ask.shapeParams(info.revision, method, params as Obj, SecureRandom.uuidV4Unsafe)
        if (shaped instanceof Error) return shaped
        return Ask.capabilityError(method, params as Obj, info.peerCapabilities) ?? shaped
      },
      context
    },
    outcome
  )
  return info.revision.stateless
    ? { resultType: "task", ...Runtime.extensionTask(record) }
    : { task: Runtime.coreTask(record) }
})

/**
 * The task ids a `subscriptions/listen` request asks `notifications/tasks`
 * for (read from the raw params: the listen filter's schema does not list
 * the extension's field), refused with -32021 when the request did not
 * declare the extension; undefined when it asks for none, or the server
 * takes no tasks.
 */
export const listenTaskIds = (
  server: State,
  info: Session.RequestInfo
): Effect.Effect<
  { readonly taskIds: ReadonlyArray<string>; readonly principal: string | undefined } | undefined,
  McpError.McpError
> => {
  const filter = paramsOf(info.request.params).notifications
  const requested = Predicate.isObject(filter) ? (filter as Obj).taskIds : undefined
  if (!Array.isArray(requested)) return Effect.succeed(undefined)
  if (!extensionDeclared(info)) return Effect.fail(missingExtension("subscriptions/listen: taskIds"))
  if (!declared(server.capabilities(info.revision), ["extensions", Tasks.extensionId])) return Effect.succeed(undefined)
  const taskIds = requested.filter((id): id is string => typeof id === "string")
  return Effect.map(principalOf, (principal) => ({ taskIds, principal }))
}

/** Whether a listener of `principal` may hear about `record` (a principal's task only by that principal). */
export const mayHear = (principal: string | undefined, owner: string): boolean =>
  !owner.startsWith("p:") || owner === principal

const taskIdOf = (params: unknown): string => String(paramsOf(params).taskId)

type Handler = (params: unknown, info: Session.RequestInfo) => Effect.Effect<object, McpError.McpError>

/** What the server adds to every result of its revision (`_meta` server info on 2026-07-28; handlers.ts). */
type Finish = <A extends object>(info: Session.RequestInfo, result: A) => A

/** The `tasks/*` handlers of a server (each picks its form by the request's revision). */
export const handlers = (
  server: State,
  finish: Finish,
  pageSize: number,
  sessionOf: () => Session.SessionShape | undefined
) => {
  const runtime = () => server.tasks()
  // A tasks/* result is finished as the server's other results are.
  const finished =
    (body: Handler): Handler =>
    (params, info) =>
      Effect.map(body(params, info), (result) => finish(info, result))
  // The extension's methods, refused to a request that did not declare it.
  const gate = (method: string, body: Handler): Handler =>
    finished((params, info) =>
      info.revision.stateless && !extensionDeclared(info) ? Effect.fail(missingExtension(method)) : body(params, info)
    )

  const get: Handler = (params, info) =>
    Effect.flatMap(principalOf, (principal) =>
      Effect.map(runtime().read(taskIdOf(params), principal), (record) =>
        info.revision.stateless ? Runtime.detailedTask(record) : Runtime.coreTask(record)
      )
    )

  const result: Handler = (params, info) =>
    Effect.flatMap(principalOf, (principal) => {
      const taskId = taskIdOf(params)
      return Effect.flatMap(runtime().awaitTerminal(taskId, principal, info.request.id), (record) => {
        const related = { [Tasks.relatedTaskKey]: { taskId } }
        if (record.status === "completed") {
          const value = (record.result ?? { content: [] }) as { readonly _meta?: object }
          return Effect.succeed({ ...value, _meta: { ...value._meta, ...related } })
        }
        if (record.status === "failed" && record.error !== undefined) {
          return Effect.fail(McpError.fromErrorObject(record.error as never))
        }
        return Effect.fail(
          new McpError.InvalidParams({ message: `Task ${taskId} was ${record.status}: it has no result` })
        )
      })
    })

  const list: Handler = (params) =>
    Effect.flatMap(principalOf, (principal): Effect.Effect<object, McpError.McpError> => {
      if (principal !== undefined) return listOf(principal, params)
      const session = sessionOf()
      if (session === undefined) return Effect.succeed({ tasks: [] })
      return Effect.flatMap(sessionKey(session), (owner) => listOf(owner, params))
    })

  const listOf = (owner: string, params: unknown): Effect.Effect<object, McpError.McpError> =>
    Effect.suspend((): Effect.Effect<object, McpError.McpError> => {
      const cursor = paramsOf(params).cursor
      if (cursor !== undefined && (typeof cursor !== "string" || TaskStore.decodeCursor(cursor) === undefined)) {
        return Effect.fail(new McpError.InvalidParams({ message: "Invalid params: unknown cursor" }))
      }
      return runtime()
        .store.list(owner, { cursor: cursor as string | undefined, limit: pageSize })
        .pipe(
          Effect.mapError(
            (error) => new McpError.InternalError({ message: `the task store failed: ${error.message}` })
          ),
          Effect.flatMap((page) =>
            Effect.map(Clock.currentTimeMillis, (now) => {
              // A store of one's own may list what ran out (its `list` should not): the list agrees with `tasks/get`.
              const tasks = page.tasks.filter((record) => !TaskStore.isExpired(record, now)).map(Runtime.coreTask)
              return page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor }
            })
          )
        )
    })

  const cancel: Handler = (params, info) =>
    Effect.flatMap(principalOf, (principal) => {
      const taskId = taskIdOf(params)
      return Effect.flatMap(runtime().read(taskId, principal), (record) => {
        // The extension acknowledges a terminal task's cancel like any other (idempotent).
        if (info.revision.stateless) {
          return Tasks.isTerminal(record.status) ? Effect.succeed({}) : Effect.as(runtime().cancel(taskId), {})
        }
        if (Tasks.isTerminal(record.status)) {
          return Effect.fail(
            new McpError.InvalidParams({ message: `Cannot cancel task: already in terminal status '${record.status}'` })
          )
        }
        return Effect.map(runtime().cancel(taskId), (cancelled) => Runtime.coreTask(cancelled ?? record))
      })
    })

  const update: Handler = (params) =>
    Effect.flatMap(principalOf, (principal) => {
      const taskId = taskIdOf(params)
      const responses = paramsOf(params).inputResponses
      return Effect.flatMap(runtime().read(taskId, principal), (record) =>
        Effect.as(runtime().input(taskId, record.worker, Predicate.isObject(responses) ? (responses as Obj) : {}), {})
      )
    })

  return new Map<string, Handler>([
    ["tasks/get", gate("tasks/get", get)],
    ["tasks/result", finished(result)],
    ["tasks/list", finished(list)],
    ["tasks/cancel", gate("tasks/cancel", cancel)],
    ["tasks/update", gate("tasks/update", update)]
  ])
}
