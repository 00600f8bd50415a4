/**
 * The session handlers of a server, built from its registries (read live on
 * every request): the list methods (paginated, shaped per revision, with
 * 2026-07-28 cache hints), logging, and resource subscriptions. Calls, reads
 * and prompts are in `features.ts`; the client's notifications (roots changed)
 * reach the server's roots hooks.
 */
import * as FastGetter from "@effect-mcp/protocol/FastGetter"
import * as Features from "@effect-mcp/protocol/Features"
import type * as Logging from "@effect-mcp/protocol/Logging"
import * as Meta from "@effect-mcp/protocol/Meta"
import type * as Resources from "@effect-mcp/protocol/Resources"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Services from "effect/Context"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { RootsChange } from "../McpServer.ts"
import * as FeatureHandlers from "./features.ts"
import * as Lazy from "./lazy.ts"
import * as Page from "./page.ts"
import { type Obj, paramsOf } from "./params.ts"
import type * as RequestScope from "./requestScope.ts"
import { CurrentEntry, LOG_LEVEL, type Listener, logLevelOf, type SessionEntry, type State } from "./server.ts"
import * as Shape from "./shape.ts"
import * as Tasking from "./tasking.ts"
import * as AskTask from "./askTask.ts"
import * as SkillHandlers from "./skills.ts"
import type { Store } from "./store.ts"
import * as Subscriptions from "./subscriptions.ts"

const conservative = { ttlMs: 0, cacheScope: "private" } as const

const entryOf = (): SessionEntry | undefined => {
  const fiber = Fiber.getCurrent()
  return fiber === undefined ? undefined : Services.getOrUndefined(fiber.context, CurrentEntry)
}

/** What the server's roots hooks learn of a session whose client says its roots changed. */
const rootsChange = (session: Session.SessionShape): RootsChange => ({
  clientInfo: session.state.peerInfo,
  list: Effect.flatMap(Lazy.rootsList, (RootsList) => RootsList.list(session))
})

/** The handlers of a server's sessions: built once per server, shared by all its sessions. */
export const make = (
  server: State
): {
  readonly requests: ReadonlyMap<string, Session.Handler>
  readonly notifications: ReadonlyMap<string, Session.NotificationHandler>
} => {
  const options = server.options
  const pageSize = Math.max(1, options.pageSize ?? 100)
  const listCache = options.cache?.list ?? conservative
  const defaultLevel = options.defaultLogLevel === "off" ? undefined : (options.defaultLogLevel ?? "info")
  // `session` is an accessor added after, with a getter shared by every server's `env` (FastGetter): an
  // object literal with a getter is a dictionary, and `env` is read on every request.
  const fields: Omit<RequestScope.Environment, "session"> = {
    sessionLogLevel: () => {
      const entry = entryOf()
      return entry === undefined ? undefined : logLevelOf(entry)
    },
    defaultLogLevel: defaultLevel,
    codec: server.requestState,
    newId: () => SecureRandom.uuidV4Unsafe()
  }
  const env: RequestScope.Environment = FastGetter.define(fields, "session", () => entryOf()?.session)
  // The server info a result carries, shaped once per revision rather than on every result.
  const shapedInfo = new Map<Info["version"], object>()
  const finish = <A extends object>(info: Session.RequestInfo, result: A): A => {
    const version = info.revision.version
    if (!Features.has(version, "resultServerInfo")) return result
    let implementation = shapedInfo.get(version)
    if (implementation === undefined) {
      implementation = Shape.implementation(version, server.info as { readonly title?: string })
      shapedInfo.set(version, implementation)
    }
    const meta = (result as { readonly _meta?: Obj })._meta
    return { ...result, _meta: { [Meta.serverInfoKey]: implementation, ...meta } }
  }
  const context: FeatureHandlers.Context = { server, env, finish }

  const list =
    <A>(store: Store<A>, key: string, shape: (version: Info["version"], item: A) => unknown): Session.Handler =>
    (params, info) =>
      Effect.suspend(() => {
        const cursor = paramsOf(params).cursor
        const page = Page.paginate(
          store.listed(),
          (e) => e.key,
          typeof cursor === "string" ? cursor : undefined,
          pageSize
        )
        if (page._tag === "Failure") return Effect.fail(page.failure)
        const version = info.revision.version
        const items = page.success.items.map((entry) => shape(version, entry.item))
        const result =
          page.success.nextCursor === undefined
            ? { [key]: items }
            : { [key]: items, nextCursor: page.success.nextCursor }
        return Effect.succeed(finish(info, Shape.withCacheHints(version, result, listCache)))
      })

  const setLevel: Session.Handler = (params) =>
    Effect.sync(() => {
      const entry = entryOf()
      if (entry !== undefined) entry.session.setFeature(LOG_LEVEL, paramsOf(params).level as Logging.LoggingLevel)
      return {}
    })

  const maxSubscriptions = options.maxSubscriptions ?? Subscriptions.defaultMaxSubscriptions
  const subscribe: Session.Handler = (params) =>
    Effect.suspend(() => {
      const uri = paramsOf(params).uri
      const entry = entryOf()
      if (entry === undefined || typeof uri !== "string" || Subscriptions.subscribe(entry, uri, maxSubscriptions)) {
        return Effect.succeed({})
      }
      return Effect.fail(Subscriptions.tooManySubscriptions(maxSubscriptions))
    })
  const unsubscribe: Session.Handler = (params) =>
    Effect.sync(() => {
      const uri = paramsOf(params).uri
      const entry = entryOf()
      if (entry !== undefined && typeof uri === "string") Subscriptions.unsubscribe(entry, uri)
      return {}
    })

  // Made once (a generator function made per call costs its own generator prototype and map).
  const listen: Session.Handler = Effect.fnUntraced(function* (params, info) {
    const current = yield* CurrentRequest.CurrentRequest
    const requested = (paramsOf(params).notifications ?? {}) as Resources.SubscriptionFilter
    const caps = server.capabilities(info.revision) as Obj
    // Only what the client asked for and the server can deliver (the spec forbids anything else).
    const honored: { -readonly [K in keyof Resources.SubscriptionFilter]: Resources.SubscriptionFilter[K] } = {}
    if (requested.toolsListChanged === true && caps.tools !== undefined) honored.toolsListChanged = true
    if (requested.promptsListChanged === true && caps.prompts !== undefined) honored.promptsListChanged = true
    if (requested.resourcesListChanged === true && caps.resources !== undefined) honored.resourcesListChanged = true
    if (requested.resourceSubscriptions !== undefined && (caps.resources as Obj | undefined)?.subscribe === true) {
      // The stream follows each URI it names as long as it lasts: as many distinct ones as a session may hold.
      const uris = requested.resourceSubscriptions
      if (uris.length > maxSubscriptions && new Set(uris).size > maxSubscriptions) {
        return yield* Subscriptions.tooManySubscriptions(maxSubscriptions)
      }
      honored.resourceSubscriptions = uris
    }
    // The Tasks extension's status notifications, for the task ids asked for.
    const tasks = yield* Tasking.listenTaskIds(server, info)
    const meta = { [Meta.subscriptionIdKey]: current.id }
    yield* current.notify("notifications/subscriptions/acknowledged", {
      _meta: meta,
      notifications: tasks === undefined ? honored : { ...honored, taskIds: tasks.taskIds }
    })
    const listener: Listener = {
      filter: honored,
      notify: (method, p) => current.notify(method, { ...p, _meta: meta }),
      authenticated: current.principal,
      ...(tasks === undefined ? {} : { taskIds: new Set(tasks.taskIds), principal: tasks.principal })
    }
    server.listeners.add(listener)
    yield* Deferred.await(server.shutdown).pipe(Effect.ensuring(Effect.sync(() => server.listeners.delete(listener))))
    return finish(info, { _meta: meta })
  })

  // The client's roots changed: each hook runs in a fiber of its own, so a slow one holds up
  // neither the session's reader nor the other hooks.
  const rootsListChanged: Session.NotificationHandler = () =>
    Effect.withFiber((fiber) => {
      const entry = Services.getOrUndefined(fiber.context, CurrentEntry)
      if (entry === undefined || server.rootsHooks.size === 0) return Effect.void
      const change = rootsChange(entry.session)
      const fork = Effect.runForkWith(fiber.context)
      for (const hook of server.rootsHooks) fork(hook(change))
      return Effect.void
    })

  const requests = new Map<string, Session.Handler>([
    ["tools/list", list(server.tools, "tools", (v, t) => Shape.tool(v, t.definition))],
    ["resources/list", list(server.resources, "resources", (v, r) => Shape.resource(v, r.definition))],
    [
      "resources/templates/list",
      list(server.templates, "resourceTemplates", (v, t) => Shape.resourceTemplate(v, t.definition))
    ],
    ["prompts/list", list(server.prompts, "prompts", (v, p) => Shape.prompt(v, p.definition))],
    ["tools/call", FeatureHandlers.callTool(context)],
    ["resources/read", FeatureHandlers.readResource(context)],
    ["prompts/get", FeatureHandlers.getPrompt(context)],
    ["completion/complete", FeatureHandlers.complete(context)],
    ["resources/subscribe", subscribe],
    ["resources/unsubscribe", unsubscribe],
    ["logging/setLevel", setLevel],
    ["subscriptions/listen", listen],
    ...SkillHandlers.make(server, finish, pageSize),
    ...Tasking.handlers(server, finish, pageSize, () => entryOf()?.session)
  ])
  return {
    requests,
    notifications: new Map([
      ["notifications/roots/list_changed", rootsListChanged],
      // A client running our ask as a task tells its new status: the ask polls it at once.
      ["notifications/tasks/status", AskTask.statusNotification]
    ])
  }
}

type Info = Session.RequestInfo["revision"]
