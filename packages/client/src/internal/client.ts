/**
 * Builds the McpClient over a ClientSession: the request path (log level in
 * `_meta`, `input_required` rounds and the `resultType` check on 2026-07-28,
 * which the handshake's `server/discover` answer gets here too,
 * progress fan-out), result decoding, pages and notification Streams; a tool
 * call's result is read by toolResult.ts.
 */
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import type * as Peer from "@effect-mcp/engine/Peer"
import * as PeerError from "@effect-mcp/engine/PeerError"
import * as ProgressStream from "@effect-mcp/engine/ProgressStream"
import * as Session from "@effect-mcp/engine/Session"
import * as Completion from "@effect-mcp/protocol/Completion"
import * as FastGetter from "@effect-mcp/protocol/FastGetter"
import * as Features from "@effect-mcp/protocol/Features"
import * as Lifecycle from "@effect-mcp/protocol/Lifecycle"
import * as Logging from "@effect-mcp/protocol/Logging"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as Prompts from "@effect-mcp/protocol/Prompts"
import * as Resources from "@effect-mcp/protocol/Resources"
import * as TaskShapes from "@effect-mcp/protocol/Tasks"
import * as Tools from "@effect-mcp/protocol/Tools"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpClient from "../McpClient.ts"
import * as Connection from "./connection.ts"
import * as Decode from "./decode.ts"
import * as Hub from "./hub.ts"
import * as InputRequired from "./inputRequired.ts"
import * as OutputSchema from "./outputSchema.ts"
import * as Paging from "./paging.ts"
import * as ParamHeaders from "./paramHeaders.ts"
import * as ResultType from "./resultType.ts"
import * as ServerRequests from "./serverRequests.ts"
import * as Subscriptions from "./subscriptions.ts"
import * as TaskReceiver from "./taskReceiver.ts"
import * as Tasks from "./tasks.ts"
import * as ToolResult from "./toolResult.ts"
import * as ToolTasks from "./toolTasks.ts"

const decodeListTools = Decode.decoder("tools/list", Tools.ListToolsResult)
const decodeListResources = Decode.decoder("resources/list", Resources.ListResourcesResult)
const decodeListTemplates = Decode.decoder("resources/templates/list", Resources.ListResourceTemplatesResult)
const decodeReadResource = Decode.decoder("resources/read", Resources.ReadResourceResult)
const decodeListPrompts = Decode.decoder("prompts/list", Prompts.ListPromptsResult)
const decodeGetPrompt = Decode.decoder("prompts/get", Prompts.GetPromptResult)
const decodeComplete = Decode.decoder("completion/complete", Completion.CompleteResult)
const decodeServerCapabilities = Schema.decodeUnknownOption(Lifecycle.ServerCapabilities)
const decodeLogMessage = Schema.decodeUnknownOption(Logging.LoggingMessageParams)
const decodeResourceUpdated = Schema.decodeUnknownOption(Resources.ResourceUpdatedParams)

const withoutSchemas = ({
  outputSchema: _,
  failure: __,
  ...rest
}: McpClient.CallToolOptions): McpClient.RequestOptions => rest

const cursorParams = (cursor: string | undefined) => (cursor === undefined ? {} : { cursor })

/**
 * The client's declarations, with the Tasks extension (SEP-2663) declared
 * unless the caller declared it (or set it to something else) itself: the
 * client follows a task a 2026-07-28 server answers a call with.
 */
const withTasksExtension = (capabilities: Session.Capabilities): Session.Capabilities => {
  const extensions = capabilities.extensions as { readonly [key: string]: unknown } | undefined
  if (extensions !== undefined && TaskShapes.extensionId in extensions) return capabilities
  return { ...capabilities, extensions: { ...extensions, [TaskShapes.extensionId]: {} } }
}

export const make = Effect.fnUntraced(function* (options: McpClient.Options) {
  const handlers = yield* ServerRequests.fromContext
  const answer = ServerRequests.answerer(handlers)
  const hub = yield* Hub.make
  const receiver = TaskReceiver.make(
    options.taskRequests,
    yield* Effect.scope,
    ServerRequests.sessionHandlers(handlers, answer),
    // Tasks run only once the connection below is made.
    (method, params) => Effect.ignore(Effect.suspend(() => connection.notify(method, params)))
  )
  const declared = ServerRequests.capabilities(handlers, options.capabilities)
  const connection = yield* Connection.make({
    clientInfo: options.clientInfo,
    capabilities: withTasksExtension(
      receiver.capability === undefined ? declared : { ...declared, tasks: receiver.capability }
    ),
    supportedVersions: options.supportedVersions,
    handlers: receiver.handlers,
    notificationHandlers: hub.handlers,
    peer: options.peer,
    handshakeTimeout: options.handshakeTimeout
  })
  const session = connection.current()
  const revision = session.state.revision!
  const stateless = revision.stateless
  const serverCapabilities = Option.getOrElse(decodeServerCapabilities(session.state.peerCapabilities), () => ({}))
  const extras = session.state.peerExtras
  // The handshake's `server/discover` answer (its result, as the session keeps it) went through the engine, not
  // the request path: its `resultType` is checked here, failing the handshake as any other bad answer does.
  if (stateless) {
    yield* Effect.mapError(
      ResultType.check("server/discover", extras),
      (cause) =>
        new ClientSession.InitializeError({
          reason: "Rejected",
          message: `initialization failed: ${cause.message}`,
          cause
        })
    )
  }
  const instructions = typeof extras.instructions === "string" ? extras.instructions : undefined
  const maxPages = options.maxPages ?? 1000
  const maxInputRounds = options.maxInputRounds ?? 10
  const subscriptions = Subscriptions.make(connection, hub, options.listenAckTimeout ?? Duration.seconds(30))
  const outputSchemas = OutputSchema.make()
  let logLevel: Logging.LoggingLevel | undefined
  const readResult = ToolResult.reader(outputSchemas, Features.has(revision.version, "structuredContent"))

  const refuse = (method: string, reason: PeerError.NotSupported["reason"], detail: string) =>
    new PeerError.NotSupported({ method, reason, detail })

  // ---- the request path ------------------------------------------------------

  const send = (
    method: string,
    params: object | undefined,
    callOptions: McpClient.RequestOptions | undefined,
    onProgress: Peer.CallOptions["onProgress"]
  ) => {
    const level = stateless && logLevel !== undefined ? logLevel : undefined
    const withLevel =
      level === undefined
        ? params
        : {
            ...params,
            _meta: { ...(params as { readonly _meta?: object } | undefined)?._meta, [Meta.logLevelKey]: level }
          }
    const sent =
      onProgress === undefined
        ? connection.request(method, withLevel, callOptions)
        : connection.request(method, withLevel, {
            ...callOptions,
            onProgress: (update) => {
              hub.publishProgress({ method, update })
              onProgress(update)
            }
          })
    // Every 2026-07-28 answer, each round's included, comes through here: its `resultType` is checked once.
    return stateless ? Effect.flatMap(sent, (result) => ResultType.check(method, result)) : sent
  }

  const request = (
    method: string,
    params: object | undefined,
    callOptions?: McpClient.RequestOptions,
    onProgress?: Peer.CallOptions["onProgress"]
  ): Effect.Effect<unknown, McpClient.CallError> =>
    stateless
      ? // Nearly every answer is final: the rounds' loop starts only when the server asks for input.
        Effect.flatMap(send(method, params, callOptions, onProgress), (first) =>
          InputRequired.isInputRequired(first)
            ? InputRequired.run({
                method,
                params,
                first,
                maxRounds: maxInputRounds,
                send: (p) => send(method, p, callOptions, onProgress),
                answer
              })
            : Effect.succeed(first)
        )
      : send(method, params, callOptions, onProgress)

  // ---- tools ---------------------------------------------------------------

  const listTools = (cursor?: string, callOptions?: McpClient.RequestOptions) =>
    request("tools/list", cursorParams(cursor), callOptions).pipe(
      Effect.flatMap(decodeListTools),
      // `x-mcp-header` (SEP-2243) exists from 2026-07-28 on: earlier revisions mirror no arguments.
      stateless ? Effect.flatMap(ParamHeaders.admit) : (self) => self,
      Effect.tap((result) =>
        Effect.sync(() => {
          outputSchemas.learn(result.tools)
          toolTasks.learn(result.tools)
        })
      )
    )

  const callToolParams = (name: string, args: { readonly [key: string]: unknown } | undefined) =>
    args === undefined ? { name } : { name, arguments: args }

  // ---- tools as tasks (see tasks.ts, toolTasks.ts) ------------------------------

  const tasksForm: McpClient.TasksForm = Features.has(revision.version, "tasks")
    ? "core"
    : stateless
      ? "extension"
      : "none"
  const tasks = Tasks.make({
    version: revision.version,
    form: tasksForm,
    declares: (path) => Session.hasCapability(serverCapabilities, path),
    request: (method, params, callOptions) => request(method, params, callOptions),
    hub,
    answer,
    maxPages,
    maxInputRounds,
    pollInterval: Duration.fromInputUnsafe(options.taskPollInterval ?? Duration.seconds(1)),
    listen:
      tasksForm === "extension" && options.taskNotifications === true
        ? (taskIds) =>
            // The extension adds `taskIds` to the listen filter (SEP-2663).
            subscriptions.listen({ taskIds } as Resources.SubscriptionFilter, new Set(["notifications/tasks"]))
        : undefined
  })
  /**
   * A `tools/call`. On 2026-07-28 over HTTP the arguments a tool declares with
   * `x-mcp-header` travel in `Mcp-Param-*` headers too, which the transport
   * derives from the tools it has seen listed: a tool called before any
   * listing goes without them, and a server that needs them refuses the call
   * with HeaderMismatch. The spec has the client list the tools then (every
   * page: the tool may be on any) and call again; once, so a second refusal
   * is the caller's.
   */
  const callToolRequest = (
    params: object,
    callOptions: McpClient.RequestOptions | undefined,
    onProgress: Peer.CallOptions["onProgress"]
  ) => {
    const call = () => request("tools/call", params, callOptions, onProgress)
    return stateless
      ? Effect.catchTag(call(), "HeaderMismatch", () =>
          Effect.andThen(Effect.ignore(Stream.runDrain(toolsStream)), call)
        )
      : call()
  }
  const toolTasks = ToolTasks.make({
    enabled: tasksForm === "core" && Session.hasCapability(serverCapabilities, ["tasks", "requests", "tools", "call"]),
    tasks,
    request: callToolRequest,
    tools: () => toolsStream
  })

  const callToolWith = (
    name: string,
    args: { readonly [key: string]: unknown } | undefined,
    callOptions: McpClient.CallToolOptions | undefined,
    onProgress?: Peer.CallOptions["onProgress"]
  ) => {
    const outputSchema = callOptions?.outputSchema
    const failure = callOptions?.failure
    const rest = callOptions === undefined ? undefined : withoutSchemas(callOptions)
    const finish = (raw: unknown): Effect.Effect<Tools.CallToolResult, unknown> =>
      // The Tasks extension: the server answered with a task, followed to the call's result.
      tasksForm === "extension" && Tasks.isTaskHandle(raw)
        ? Effect.flatMap(tasks.settleHandle(raw, rest), finish)
        : readResult(name, raw, outputSchema, failure)
    return Effect.flatMap(toolTasks.send(callToolParams(name, args), rest, onProgress), finish)
  }

  const callTool = (
    name: string,
    args?: { readonly [key: string]: unknown },
    callOptions?: McpClient.CallToolOptions
  ) => callToolWith(name, args, callOptions)

  const callToolWithProgress = (
    name: string,
    args?: { readonly [key: string]: unknown },
    callOptions?: McpClient.CallToolOptions
  ) =>
    // The error is also the caller's decoded `failure`: any value, typed by the overloads.
    ProgressStream.make<Tools.CallToolResult, unknown>((onProgress) =>
      callToolWith(name, args, callOptions, onProgress)
    )

  // ---- resources, prompts, completion ----------------------------------------

  const listResources = (cursor?: string, callOptions?: McpClient.RequestOptions) =>
    Effect.flatMap(request("resources/list", cursorParams(cursor), callOptions), decodeListResources)
  const listResourceTemplates = (cursor?: string, callOptions?: McpClient.RequestOptions) =>
    Effect.flatMap(request("resources/templates/list", cursorParams(cursor), callOptions), decodeListTemplates)
  const listPrompts = (cursor?: string, callOptions?: McpClient.RequestOptions) =>
    Effect.flatMap(request("prompts/list", cursorParams(cursor), callOptions), decodeListPrompts)

  const subscribeResource = (
    uri: string
  ): Effect.Effect<
    Stream.Stream<Resources.ResourceUpdatedParams, McpClient.StreamError>,
    McpClient.StreamError,
    Scope.Scope
  > => {
    const subscribed: Effect.Effect<
      Stream.Stream<Hub.Notification, McpClient.StreamError>,
      McpClient.StreamError,
      Scope.Scope
    > = stateless
      ? Session.hasCapability(serverCapabilities, ["resources", "subscribe"])
        ? subscriptions.listenScoped({ resourceSubscriptions: [uri] }, new Set(["notifications/resources/updated"]))
        : Effect.fail(
            refuse("subscriptions/listen", "CapabilityNotDeclared", "the server did not declare resources.subscribe")
          )
      : subscriptions.resource(uri)
    return Effect.map(subscribed, (updates) =>
      updates.pipe(
        Stream.filterMap((n) => {
          const params = decodeResourceUpdated(n.params)
          return Option.isSome(params) && Subscriptions.concerns(uri, params.value.uri)
            ? Result.succeed(params.value)
            : Result.failVoid
        })
      )
    )
  }

  const resourceUpdates = (uri: string): Stream.Stream<Resources.ResourceUpdatedParams, McpClient.StreamError> =>
    Stream.unwrap(subscribeResource(uri))

  const listChanged = (
    kind: "tools" | "prompts" | "resources",
    filterKey: "toolsListChanged" | "promptsListChanged" | "resourcesListChanged"
  ): Stream.Stream<void, McpClient.StreamError> => {
    const method = `notifications/${kind}/list_changed`
    if (!Session.hasCapability(serverCapabilities, [kind, "listChanged"])) {
      // Made when the Stream runs: an error made with every client (three, for a server without list changes)
      // costs a stack trace each.
      return Stream.failSync(() =>
        refuse(method, "CapabilityNotDeclared", `the server did not declare ${kind}.listChanged`)
      )
    }
    const methods = new Set([method])
    const source = stateless
      ? subscriptions.listen({ [filterKey]: true }, methods)
      : subscriptions.notifications(methods)
    return Stream.map(source, () => undefined)
  }

  const setLoggingLevel = (level: Logging.LoggingLevel): Effect.Effect<void, McpClient.CallError> => {
    if (!stateless) {
      return Effect.asVoid(
        Effect.tap(request("logging/setLevel", { level }), () =>
          Effect.sync(() => {
            logLevel = level
          })
        )
      )
    }
    if (!Session.hasCapability(serverCapabilities, ["logging"])) {
      return Effect.fail(refuse("logging/setLevel", "CapabilityNotDeclared", "the server did not declare logging"))
    }
    return Effect.sync(() => {
      logLevel = level
    })
  }

  // A new session (the server expired the last) logs at the server's default: the level set is asked again.
  if (!stateless) {
    connection.onRenewal(
      Effect.suspend(() =>
        logLevel === undefined
          ? Effect.void
          : Effect.ignore(connection.request("logging/setLevel", { level: logLevel }))
      )
    )
  }

  // The tool list changed: what was learnt about output schemas may be stale (forgotten as the notice arrives).
  hub.watch("notifications/tools/list_changed", () => {
    outputSchemas.reset()
    toolTasks.reset()
  })

  // Roots that change are announced where the revision has the notification.
  const rootsChanges = handlers.roots?.changes
  if (rootsChanges !== undefined && revision.methods.has("notifications/roots/list_changed")) {
    yield* rootsChanges.pipe(
      Stream.runForEach(() => Effect.ignore(connection.notify("notifications/roots/list_changed"))),
      Effect.forkScoped({ startImmediately: true })
    )
  }

  const pages = <A>(
    method: string,
    fetch: (cursor: string | undefined) => Effect.Effect<Paging.Page<A>, McpClient.CallError>
  ) => Paging.stream({ method, maxPages, fetch })
  const toolsStream = pages("tools/list", (cursor) =>
    Effect.map(listTools(cursor), (r) => ({ items: r.tools, nextCursor: r.nextCursor }))
  )

  const client = {
    revision: revision.version,
    serverInfo: session.state.peerInfo,
    serverCapabilities,
    instructions,
    // 2026-07-28 has no ping; `server/discover` is the cheapest request every server of it answers, so a
    // liveness check works on every revision without its caller testing which one was negotiated.
    ping: revision.methods.has("ping")
      ? (callOptions) => Effect.asVoid(request("ping", undefined, callOptions))
      : (callOptions) => Effect.asVoid(request("server/discover", {}, callOptions)),
    listTools,
    tools: toolsStream,
    callTool: callTool as McpClient.McpClientShape["callTool"],
    callToolWithProgress: callToolWithProgress as McpClient.McpClientShape["callToolWithProgress"],
    listResources,
    resources: pages("resources/list", (cursor) =>
      Effect.map(listResources(cursor), (r) => ({ items: r.resources, nextCursor: r.nextCursor }))
    ),
    listResourceTemplates,
    resourceTemplates: pages("resources/templates/list", (cursor) =>
      Effect.map(listResourceTemplates(cursor), (r) => ({ items: r.resourceTemplates, nextCursor: r.nextCursor }))
    ),
    readResource: (uri, callOptions) =>
      Effect.flatMap(request("resources/read", { uri }, callOptions), decodeReadResource),
    resourceUpdates,
    subscribeResource,
    listPrompts,
    prompts: pages("prompts/list", (cursor) =>
      Effect.map(listPrompts(cursor), (r) => ({ items: r.prompts, nextCursor: r.nextCursor }))
    ),
    getPrompt: (name, args, callOptions) =>
      Effect.flatMap(
        request("prompts/get", args === undefined ? { name } : { name, arguments: args }, callOptions),
        decodeGetPrompt
      ),
    complete: (ref, argument, context, callOptions) =>
      Effect.flatMap(
        request(
          "completion/complete",
          context === undefined ? { ref, argument } : { ref, argument, context },
          callOptions
        ),
        decodeComplete
      ),
    setLoggingLevel,
    logMessages: subscriptions
      .notifications(new Set(["notifications/message"]))
      .pipe(
        Stream.filterMap((n) =>
          Option.match(decodeLogMessage(n.params), { onNone: () => Result.failVoid, onSome: Result.succeed })
        )
      ),
    progress: hub.progressStream,
    toolListChanged: listChanged("tools", "toolsListChanged"),
    promptListChanged: listChanged("prompts", "promptsListChanged"),
    resourceListChanged: listChanged("resources", "resourcesListChanged"),
    tasks: tasks.api,
    closed: connection.ended,
    request: (method, params, callOptions) => request(method, params, callOptions),
    requestOnce: (method, params, callOptions) => {
      if (callOptions?.onProgress === undefined) return send(method, params, callOptions, undefined)
      const { onProgress, ...rest } = callOptions
      return send(method, params, rest, onProgress)
    }
  } satisfies Omit<McpClient.McpClientShape, "session">
  // Added afterwards, with a getter shared by every client: an object literal with a getter is a dictionary
  // (each method read a hash lookup, and 1.6 KiB per client), and so is every client after the first given
  // a getter of its own.
  return FastGetter.define(client, "session", () => connection.current()) satisfies McpClient.McpClientShape
})
