/**
 * What stands behind McpServer's public service: the registries, the live
 * sessions and `subscriptions/listen` streams, the roots hooks, the
 * `requestState` codec and the shutdown signal, and the broadcasts that reach
 * them. Handlers and session setup read it through `stateOf`; users see only
 * the public shape it builds.
 */
import * as Logging from "@effect-mcp/protocol/Logging"
import * as ProtocolTasks from "@effect-mcp/protocol/Tasks"
import * as Skills from "@effect-mcp/protocol/Skills"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Revision from "@effect-mcp/protocol/Revision"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Session from "@effect-mcp/engine/Session"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Context from "effect/Context"
import type * as Mac from "effect/crypto/Mac"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import type { Change, Kind, McpServerShape, Options, RootsChange } from "../McpServer.ts"
import type * as Prompt from "../Prompt.ts"
import type * as Resource from "../Resource.ts"
import type * as ResourceTemplate from "../ResourceTemplate.ts"
import type * as Skill from "../Skill.ts"
import * as TaskStore from "../TaskStore.ts"
import type * as Tool from "../Tool.ts"
import * as RequestState from "./requestState.ts"
import * as Shape from "./shape.ts"
import { type Entry, Store } from "./store.ts"
import * as Subscriptions from "./subscriptions.ts"
import { broadcast, type Send } from "./broadcast.ts"
import * as Tasking from "./tasking.ts"
import * as Tasks from "./tasks.ts"

/** A registered item and the services its handlers run with. */
export type Registered<A> = Entry<A>

/** A stateful session the server is serving. */
export interface SessionEntry {
  readonly session: Session.SessionShape
  /** The transport it is served over, which says whom its requests come from (`principal`). */
  readonly transport: Transport.TransportShape
}

/**
 * What the server keeps about a session lives in the session's features, so
 * the session's snapshot carries it (a session continued in another process
 * keeps its log level and subscriptions): the level `logging/setLevel` set
 * (and the URIs subscribed: `SUBSCRIPTIONS` in subscriptions.ts).
 */
export const LOG_LEVEL = "logging/level"

/** The level a session's client set with `logging/setLevel`, if it did. */
export const logLevelOf = (entry: SessionEntry): Logging.LoggingLevel | undefined =>
  entry.session.feature(LOG_LEVEL) as Logging.LoggingLevel | undefined

/**
 * The stateful session a request is served in. A session's Peer carries it in
 * the context its request fibers start with, so one table of handlers serves
 * every session of a server.
 */
export class CurrentEntry extends Context.Service<CurrentEntry, SessionEntry>()(
  "@effect-mcp/server/internal/CurrentEntry"
) {}

/** A 2026-07-28 `subscriptions/listen` stream. */
export interface Listener {
  readonly filter: Resources.SubscriptionFilter
  /** Sends one notification on the stream. */
  readonly notify: (method: string, params: object) => Effect.Effect<void>
  /** The tasks whose `notifications/tasks` the stream carries (the Tasks extension). */
  readonly taskIds?: ReadonlySet<string> | undefined
  /** The principal that asked for them (a principal's task is told to that principal only). */
  readonly principal?: string | undefined
  /** Whom the stream's request came from, when its transport authenticates (`resourceUpdateVisible` is asked of it). */
  readonly authenticated: Transport.Authenticated | undefined
}

/** The server's state (one per `McpServer.make`). */
export interface State {
  readonly info: Session.Implementation
  readonly options: Options
  readonly tools: Store<Tool.Tool<unknown>>
  readonly resources: Store<Resource.Resource<unknown>>
  readonly templates: Store<ResourceTemplate.ResourceTemplate<unknown>>
  readonly prompts: Store<Prompt.Prompt<unknown>>
  /** Skills (SEP-2640), keyed by the URI of their `SKILL.md`. */
  readonly skills: Store<Skill.Skill>
  /**
   * The registered skills' supporting files (every file but the `SKILL.md`, which is in `resources`): read by
   * URI, never listed by `resources/list`.
   */
  readonly skillFiles: Store<Resource.Resource<unknown>>
  /** The open sessions, keyed by their Peer (whose close removes them). */
  readonly sessions: Map<object, SessionEntry>
  /** Forgets the session of a Peer that closed: the one `Peer.onClose` hook of every session. */
  readonly forgetSession: (peer: object) => void
  readonly listeners: Set<Listener>
  /** Run on `notifications/roots/list_changed` from any session. */
  readonly rootsHooks: Set<(change: RootsChange) => Effect.Effect<void>>
  readonly requestState: RequestState.Codec
  /** Completes when the server shuts down (ends `subscriptions/listen` streams gracefully). */
  readonly shutdown: Deferred.Deferred<void>
  readonly capabilities: (
    revision: Revision.RevisionSpec | undefined,
    carriesUnsolicited?: boolean
  ) => Session.Capabilities
  /** The server's tasks, made on first use (with the `TaskStore` in context when the server was made, else in memory). */
  readonly tasks: () => Tasks.Runtime
  /** The public service over this state. */
  readonly service: McpServerShape
}

const states = new WeakMap<McpServerShape, State>()

/** The state behind a service `make` built (undefined for a service built some other way). */
export const stateOf = (service: McpServerShape): State | undefined => states.get(service)

const listKind: { readonly [K in Kind]: "tools" | "resources" | "prompts" } = {
  tool: "tools",
  resource: "resources",
  template: "resources",
  prompt: "prompts",
  // What `skills/list` shows changes with the skill resources: announced as a resources change.
  skill: "resources"
}

const keyOf: { readonly [K in Kind]: (item: never) => string } = {
  tool: (t: Tool.Tool<unknown>) => t.name,
  resource: (r: Resource.Resource<unknown>) => r.uri,
  template: (t: ResourceTemplate.ResourceTemplate<unknown>) => t.uriTemplate,
  prompt: (p: Prompt.Prompt<unknown>) => p.name,
  skill: (s: Skill.Skill) => s.uri
}

const filterKey = {
  tools: "toolsListChanged",
  resources: "resourcesListChanged",
  prompts: "promptsListChanged"
} as const

/** The Skills extension as a server with skills declares it (it answers `resources/directory/read`). */
const skillsDeclaration = { [Skills.extensionId]: { directoryRead: true } }

/** The 2025-11-25 `tasks` capability of a server with task-taking tools. */
const coreTasksDeclaration = { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }
/** The Tasks extension (SEP-2663) as a server with task-taking tools declares it on 2026-07-28. */
const tasksExtensionDeclaration = { [ProtocolTasks.extensionId]: {} }

/**
 * Which tasks a revision declares: the 2025-11-25 capability, or the
 * extension on 2026-07-28 (which must not carry the former); both when the
 * revision is not known.
 */
const taskForms = (version: string | undefined) => ({
  core: version === undefined || version === "2025-11-25",
  extension: version === undefined || version === "2026-07-28"
})

/** Builds the state and the public service over it. */
export const make = (options: Options): Effect.Effect<State, never, Mac.Mac | Scope.Scope> =>
  Effect.gen(function* () {
    const info: Session.Implementation = {
      name: options.name,
      version: options.version,
      ...(options.title === undefined ? {} : { title: options.title }),
      ...(options.description === undefined ? {} : { description: options.description }),
      ...(options.websiteUrl === undefined ? {} : { websiteUrl: options.websiteUrl }),
      ...(options.icons === undefined ? {} : { icons: options.icons })
    }
    const requestState = yield* RequestState.make({
      ttlMs: options.requestStateTtlMs ?? 10 * 60_000,
      keys: options.requestStateKeys
    })
    const scope = yield* Scope.Scope
    const taskStore = yield* Effect.serviceOption(TaskStore.TaskStore)
    let taskRuntime: Tasks.Runtime | undefined
    const tasks = () => {
      taskRuntime ??=
        taskStore._tag === "Some"
          ? new Tasks.Runtime(taskStore.value, true, scope, options.tasks, taskChanged, taskInput)
          : new Tasks.Runtime(TaskStore.makeMemory(), false, scope, options.tasks, taskChanged)
      return taskRuntime
    }
    // A task's new status reaches the `subscriptions/listen` streams that asked for it.
    const announceTask = (record: TaskStore.TaskRecord) =>
      Effect.suspend(() => {
        const sends: Array<Send> = []
        for (const listener of listeners) {
          if (listener.taskIds?.has(record.taskId) === true && Tasking.mayHear(listener.principal, record.owner)) {
            sends.push([listener, listener.notify("notifications/tasks", Tasks.detailedTask(record))])
          }
        }
        return broadcast(sends)
      })
    // Published too: a process sharing the task store may serve a listen stream for it, or run it.
    const taskChanged = (record: TaskStore.TaskRecord) =>
      published(announceTask(record), () => ({ _tag: "TaskStatus", taskId: record.taskId }))
    // Input for a task another process runs: published only (none hears it here).
    const taskInput = (taskId: string, responses: Tasks.Responses) =>
      published(Effect.void, () => ({ _tag: "TaskInput", taskId, responses }))
    // Read from the store only where it matters: a listen stream here asked for it, or it runs here.
    const deliverTask = (taskId: string) =>
      Effect.suspend(() => {
        let wanted = taskRuntime?.running.has(taskId) === true
        for (const listener of listeners) if (listener.taskIds?.has(taskId) === true) wanted = true
        if (!wanted) return Effect.void
        return Effect.flatMap(tasks().changedElsewhere(taskId), (record) =>
          record === undefined ? Effect.void : announceTask(record)
        )
      })
    // The registered tools taking tasks (their entries) decide the tasks capability.
    const taskTools = new Set<Registered<Tool.Tool<unknown>>>()
    const shutdown = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(shutdown, undefined))
    const stores = {
      tool: new Store<Tool.Tool<unknown>>(),
      resource: new Store<Resource.Resource<unknown>>(),
      template: new Store<ResourceTemplate.ResourceTemplate<unknown>>(),
      prompt: new Store<Prompt.Prompt<unknown>>(),
      skill: new Store<Skill.Skill>()
    }
    const skillFiles = new Store<Resource.Resource<unknown>>()
    const sessions = new Map<object, SessionEntry>()
    const listeners = new Set<Listener>()
    const rootsHooks = new Set<(change: RootsChange) => Effect.Effect<void>>()
    const declared = new Set(options.declare ?? [])

    // Run after each change announced here; none unless the server is spread over processes.
    const changeHooks = new Set<(change: Change) => Effect.Effect<void>>()
    const published = (announced: Effect.Effect<void>, change: () => Change) =>
      Effect.suspend(() =>
        changeHooks.size === 0
          ? announced
          : Effect.andThen(
              announced,
              Effect.forEach([...changeHooks], (hook) => hook(change()), { discard: true })
            )
      )

    const announceList = (kind: "tools" | "resources" | "prompts") =>
      Effect.suspend(() => {
        const method = `notifications/${kind}/list_changed`
        const sends: Array<Send> = []
        for (const entry of sessions.values()) sends.push([entry, Effect.ignore(entry.session.notify(method, {}))])
        for (const listener of listeners)
          if (listener.filter[filterKey[kind]] === true) sends.push([listener, listener.notify(method, {})])
        return broadcast(sends)
      })
    const listChanged = (kind: "tools" | "resources" | "prompts") =>
      published(announceList(kind), () => ({ _tag: "ListChanged", kind }))

    const register = (kind: Kind, items: ReadonlyArray<unknown>, context: Context.Context<never>) =>
      Effect.gen(function* () {
        const store = stores[kind] as Store<unknown>
        const key = keyOf[kind]
        const entries = items.map((item) => {
          const k = key(item as never)
          // A replaced tool no longer counts for the tasks capability.
          if (kind === "tool") taskTools.delete(store.get(k) as Registered<Tool.Tool<unknown>>)
          return store.put(k, item, context)
        })
        if (kind === "tool") {
          for (const entry of entries as ReadonlyArray<Registered<Tool.Tool<unknown>>>) {
            const support = entry.item.taskSupport
            if (support === "optional" || support === "required") taskTools.add(entry)
          }
        }
        // A skill's files come and go with it, in the same change (one `list_changed`). Only its SKILL.md is
        // listed by `resources/list` (as SEP-2640 hosts discover skills, and SDK 2.4.0 lists them): the other
        // files are read by URI, when needed, from its `skills/list` entry.
        const files: Array<readonly [Store<Resource.Resource<unknown>>, Registered<Resource.Resource<unknown>>]> = []
        if (kind === "skill") {
          for (const skill of items as ReadonlyArray<Skill.Skill>) {
            for (const resource of skill.resources) {
              const to = resource.uri === skill.uri ? stores.resource : skillFiles
              files.push([to, to.put(resource.uri, resource, context)])
            }
          }
        }
        yield* listChanged(listKind[kind])
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            let removed = false
            for (const entry of entries) {
              if (!store.remove(entry)) continue
              removed = true
              taskTools.delete(entry as Registered<Tool.Tool<unknown>>)
            }
            for (const [from, entry] of files) removed = from.remove(entry) || removed
            return removed ? listChanged(listKind[kind]) : Effect.void
          })
        )
      })

    // A declaration depends only on the revision, which kinds are present and whether changes can be announced:
    // sessions declaring the same share one object (each keeps what it declared).
    // Stateless revisions ask on every request, so the lookup is a small index, not a string key.
    const declarations = new Map<string | undefined, Array<Session.Capabilities | undefined>>()
    const capabilities = (
      revision: Revision.RevisionSpec | undefined,
      carriesUnsolicited = true
    ): Session.Capabilities => {
      const hasSkills = stores.skill.size > 0 || declared.has("skills")
      const hasResources =
        stores.resource.size > 0 || stores.template.size > 0 || declared.has("resources") || hasSkills
      const hasPrompts = stores.prompt.size > 0 || declared.has("prompts")
      const hasCompletions = hasPrompts || stores.template.size > 0
      const hasTools = stores.tool.size > 0 || declared.has("tools")
      const hasTasks = taskTools.size > 0
      // `listChanged` and `subscribe` promise notifications the server sends on its own, outside any request. A
      // stateless revision's client gets them on its `subscriptions/listen` stream (`undefined`: a stateless
      // request); a stateful revision's only over its session's channel for them, which not every transport has
      // (a `stateless` Streamable HTTP server's one-shot sessions have no GET stream): none is promised there.
      const announces = carriesUnsolicited || revision === undefined || revision.stateless
      const subscribe = announces && (options.resourceSubscriptions?.() ?? true)
      const index =
        (hasResources ? 1 : 0) |
        (hasPrompts ? 2 : 0) |
        (hasCompletions ? 4 : 0) |
        (hasTools ? 8 : 0) |
        (hasSkills ? 16 : 0) |
        (hasTasks ? 32 : 0) |
        (hasResources && !subscribe ? 64 : 0) |
        (announces ? 0 : 128)
      const version = revision?.version
      let byKinds = declarations.get(version)
      if (byKinds === undefined) {
        byKinds = []
        declarations.set(version, byKinds)
      }
      let shaped = byKinds[index]
      if (shaped === undefined) {
        const changes = announces ? { listChanged: true } : {}
        shaped = Shape.capabilities(version, {
          ...options.capabilities,
          ...(hasTasks && taskForms(version).core ? coreTasksDeclaration : {}),
          logging: {},
          ...(hasCompletions ? { completions: {} } : {}),
          ...(hasPrompts ? { prompts: changes } : {}),
          ...(hasResources ? { resources: subscribe ? { subscribe: true, ...changes } : changes } : {}),
          ...(hasTools ? { tools: changes } : {}),
          ...(hasSkills || (hasTasks && taskForms(version).extension)
            ? {
                extensions: {
                  ...options.capabilities?.extensions,
                  ...(hasSkills ? skillsDeclaration : {}),
                  ...(hasTasks && taskForms(version).extension ? tasksExtensionDeclaration : {})
                }
              }
            : {})
        })
        byKinds[index] = shaped
      }
      return shaped
    }

    // Who is told of an update is asked per recipient when it is announced: a subscription covers the URIs under it,
    // which a check of the subscribe (the gateway's policy) could not know. Asked in the announcing fiber, one
    // recipient after the other, so the sends still start in order.
    const visible = options.resourceUpdateVisible
    const announceUpdate = (uri: string) =>
      Effect.suspend(() => {
        const sends: Array<Send> = []
        const principals: Array<Transport.Authenticated | undefined> = []
        for (const entry of sessions.values()) {
          if (Subscriptions.covers(Subscriptions.subscriptionsOf(entry), uri)) {
            sends.push([entry, Effect.ignore(entry.session.notify("notifications/resources/updated", { uri }))])
            if (visible !== undefined) principals.push(entry.transport.principal?.())
          }
        }
        for (const listener of listeners) {
          if (Subscriptions.covers(listener.filter.resourceSubscriptions ?? [], uri)) {
            sends.push([listener, listener.notify("notifications/resources/updated", { uri })])
            if (visible !== undefined) principals.push(listener.authenticated)
          }
        }
        if (visible === undefined || sends.length === 0) return broadcast(sends)
        return Effect.flatMap(
          Effect.forEach(principals, (principal) => visible(uri, principal)),
          (told) => broadcast(sends.filter((_, i) => told[i]))
        )
      })
    const resourceUpdated = (uri: string) => published(announceUpdate(uri), () => ({ _tag: "ResourceUpdated", uri }))

    const onChange = (hook: (change: Change) => Effect.Effect<void>) =>
      Effect.acquireRelease(
        Effect.sync(() => changeHooks.add(hook)),
        () => Effect.sync(() => changeHooks.delete(hook))
      ).pipe(Effect.asVoid)
    const deliver = (change: Change) =>
      change._tag === "ListChanged"
        ? announceList(change.kind)
        : change._tag === "ResourceUpdated"
          ? announceUpdate(change.uri)
          : change._tag === "TaskStatus"
            ? deliverTask(change.taskId)
            : Effect.suspend(() => taskRuntime?.answer(change.taskId, change.responses) ?? Effect.void)

    const defaultLevel = options.defaultLogLevel === "off" ? undefined : (options.defaultLogLevel ?? "info")
    const log = (level: Logging.LoggingLevel, data: unknown, logger?: string) =>
      Effect.suspend(() => {
        const params = logger === undefined ? { level, data } : { level, logger, data }
        const sends: Array<Send> = []
        for (const entry of sessions.values()) {
          const threshold = logLevelOf(entry) ?? defaultLevel
          if (threshold !== undefined && Logging.isEnabled(level, threshold)) {
            sends.push([entry, Effect.ignore(entry.session.notify("notifications/message", params))])
          }
        }
        return broadcast(sends)
      })

    const onRootsListChanged = (hook: (change: RootsChange) => Effect.Effect<void>) =>
      Effect.acquireRelease(
        Effect.sync(() => rootsHooks.add(hook)),
        () => Effect.sync(() => rootsHooks.delete(hook))
      ).pipe(Effect.asVoid)

    const service: McpServerShape = {
      info,
      capabilities,
      register,
      toolDefinition: (name) => stores.tool.get(name)?.item.definition as Tools.Tool | undefined,
      sessionCount: () => sessions.size,
      listChanged,
      resourceUpdated,
      onChange,
      deliver,
      log,
      onRootsListChanged
    }
    const state: State = {
      info,
      options,
      tools: stores.tool,
      resources: stores.resource,
      templates: stores.template,
      prompts: stores.prompt,
      skills: stores.skill,
      skillFiles,
      sessions,
      forgetSession: (peer) => {
        sessions.delete(peer)
      },
      listeners,
      rootsHooks,
      requestState,
      shutdown,
      capabilities,
      tasks,
      service
    }
    states.set(service, state)
    return state
  })
