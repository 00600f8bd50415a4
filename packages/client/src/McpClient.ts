/**
 * The MCP client: connects over the current `Transport` (negotiating the
 * revision: `server/discover` for 2026-07-28 servers, the `initialize`
 * handshake with the newest stateful revision otherwise), then offers a typed
 * method for every server feature. Results are decoded with the domain
 * schemas; paginated lists are also Streams over every page; server
 * notifications are Streams.
 *
 * What the client answers when the server asks (sampling, elicitation,
 * roots) comes from optional handler Layers (`SamplingHandler`,
 * `ElicitationHandler`, `RootsHandler`): the declared capabilities follow
 * from which are provided. On 2026-07-28 the same handlers answer
 * `input_required` results, and the request is retried for the caller.
 *
 * A method the negotiated revision or the server's capabilities do not allow
 * fails with `NotSupported` before anything is sent.
 */
import type * as ClientSession from "@effect-mcp/engine/ClientSession"
import type * as Peer from "@effect-mcp/engine/Peer"
import type * as PeerError from "@effect-mcp/engine/PeerError"
import type * as Session from "@effect-mcp/engine/Session"
import type * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Completion from "@effect-mcp/protocol/Completion"
import type * as Lifecycle from "@effect-mcp/protocol/Lifecycle"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type * as ClientError from "./ClientError.ts"
import type { TasksApi } from "./ClientTasks.ts"
import type * as ElicitationForm from "./ElicitationForm.ts"
import type * as RootsHandler from "./RootsHandler.ts"
import * as Internal from "./internal/client.ts"
import type * as Hub from "./internal/hub.ts"
import type * as TaskRequests from "./TaskRequests.ts"

export { InitializeError } from "@effect-mcp/engine/ClientSession"

/** How a client identifies itself, which revisions it speaks, and its limits. */
export interface Options {
  readonly clientInfo: Session.Implementation
  /** Declarations beyond what the handler Layers imply (e.g. `experimental`, `extensions`). */
  readonly capabilities?: Session.Capabilities | undefined
  /** Revisions this client speaks. Default: all of them (the newest is offered first). */
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  readonly peer?: Peer.Options | undefined
  /**
   * The handshake's one deadline, in milliseconds: discovery and the fallback `initialize` share it (an
   * `InitializeError` with reason `Timeout` names the step that ran out). Default: the Peer's request timeout.
   */
  readonly handshakeTimeout?: number | undefined
  /** Most pages a `list*` Stream reads before failing with `PaginationError` (TooManyPages). Default 1000. */
  readonly maxPages?: number | undefined
  /** Most `input_required` rounds per request (2026-07-28). Default 10. */
  readonly maxInputRounds?: number | undefined
  /** How long a 2026-07-28 `subscriptions/listen` may go unacknowledged. Default 30 seconds. */
  readonly listenAckTimeout?: Duration.Input | undefined
  /** How often a task is polled when the server suggests no `pollInterval`. Default 1 second. */
  readonly taskPollInterval?: Duration.Input | undefined
  /**
   * The Tasks extension (2026-07-28): while a task is followed, also listen for its `notifications/tasks`
   * (a `subscriptions/listen` naming its id), so a server that pushes them ends waits early. Polling goes on
   * either way. Default false (one more open request per task followed).
   */
  readonly taskNotifications?: boolean | undefined
  /**
   * Take the server's sampling / elicitation requests as tasks (2025-11-25): the client declares
   * `tasks.requests.sampling.createMessage` / `tasks.requests.elicitation.create` (for the handlers it
   * has), `tasks.list` and `tasks.cancel`; a request carrying `task` is answered at once with a task,
   * its handler runs as a fiber of the client's scope, and the server polls it. See docs/tasks.md.
   */
  readonly taskRequests?: TaskRequests.Options | undefined
}

/** Per-call settings, passed to the Peer. */
export interface RequestOptions {
  readonly timeout?: Duration.Input | undefined
  /** Each progress notification restarts the timeout (the request then carries a progress token). */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /** An upper bound progress cannot extend. */
  readonly maxTotalTimeout?: Duration.Input | undefined
}

export interface CallToolOptions<A = unknown, E = unknown> extends RequestOptions {
  /** Decodes `structuredContent`; the call then fails unless the tool returns content matching it. */
  readonly outputSchema?: Schema.Decoder<A> | undefined
  /**
   * Decodes the failure of an `isError` result (its `structuredContent`, else
   * the JSON of its text block, as an effect-mcp tool with a `failure` Schema
   * sends it); the call then fails with the decoded value. An `isError`
   * result it does not decode is handled as without it.
   */
  readonly failure?: Schema.Decoder<E> | undefined
}

/** A tool result whose `structuredContent` was decoded with the caller's schema. */
export type StructuredToolResult<A> = {
  // `Omit` would erase the named fields: CallToolResult has an index signature.
  readonly [K in keyof Tools.CallToolResult as K extends "structuredContent" ? never : K]: Tools.CallToolResult[K]
} & {
  readonly structuredContent: A
}

/**
 * What a call can fail with. `SessionExpired`: the server ended the session
 * while the call was in flight (a Streamable HTTP 404); the client starts a
 * new session by itself, and the next call goes there. `TransportError`: the
 * message could not be delivered (the server is unreachable, say), as
 * opposed to an error the server answered. `TaskError`: a tool call run as
 * a task came to no result (the task was cancelled, or failed without an error).
 * `InvalidRoot`: on 2026-07-28 the server asked for the roots and the client's
 * list held a root that is not a `file://` URI (nothing was sent).
 */
export type CallError =
  | Peer.CallError
  | StreamableHttpClient.SessionExpired
  | PeerError.NotSupported
  | ClientError.InvalidResult
  | ClientError.InputRequiredError
  | ElicitationForm.FormError
  | RootsHandler.InvalidRoot
  | ClientError.TaskError

/** What a typed tool call can fail with. */
export type ToolCallError = CallError | ClientError.ToolError

/** What a Stream over all pages can fail with. */
export type ListError = CallError | ClientError.PaginationError

/**
 * What a notification Stream can fail with: `InvalidResult` when the server
 * ended a 2026-07-28 `subscriptions/listen` with an unrecognized `resultType`.
 */
export type StreamError =
  | Peer.CallError
  | StreamableHttpClient.SessionExpired
  | PeerError.NotSupported
  | ClientError.SubscriptionError
  | ClientError.InvalidResult

/** An element of a call made with progress: `Progress` updates, then one `Result`. */
export type ProgressEvent<A> = Peer.ProgressEvent<A>

/** Progress of one of the client's requests, with the method it is about. */
export type Progress = Hub.Progress

// The tasks API (tool calls run as tasks) is a concept of its own (ClientTasks.ts), exported from here too.
export type { TaskCallOptions, TaskEvent, TasksApi, TasksForm, TaskStart } from "./ClientTasks.ts"

/** A connected client: what the server declared, and one method per MCP request (refused locally with `NotSupported` when the server did not declare the capability or the revision has no such method). */
export interface McpClientShape {
  /** The session underneath, for raw access (a new one after the server ended the previous one). */
  readonly session: Session.SessionShape
  /**
   * Completes when the client's connection is over, with why: its session
   * closed (the server exited or dropped the connection, the transport
   * failed, a keepalive ping went unanswered). An HTTP session the server
   * expired is not the end: the client starts another; if it cannot, that is
   * the end (a later call still tries again). A client that only listens (to
   * `logMessages`, say) waits on this to learn the server is gone.
   */
  readonly closed: Effect.Effect<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>>
  readonly revision: ProtocolVersion.ProtocolVersion
  readonly serverInfo: Session.Implementation | undefined
  readonly serverCapabilities: Lifecycle.ServerCapabilities
  readonly instructions: string | undefined

  /**
   * Checks that the server answers: `ping`, or on 2026-07-28 (which has no
   * ping) `server/discover`, so it works on every revision.
   */
  readonly ping: (options?: RequestOptions) => Effect.Effect<void, CallError>

  /** One page of `tools/list` (pass the previous page's `nextCursor` for the next one). */
  readonly listTools: (cursor?: string, options?: RequestOptions) => Effect.Effect<Tools.ListToolsResult, CallError>
  /** Every tool, over all pages. */
  readonly tools: Stream.Stream<Tools.Tool, ListError>
  /**
   * Calls a tool. With `outputSchema`, its `structuredContent` is decoded (the call fails without matching content); with `failure`, an `isError` result carrying a failure that Schema decodes fails the call with the decoded value.
   * A tool the server runs as a task (2025-11-25 `taskSupport: "required"`, or a task the server answers with on the 2026-07-28 Tasks extension) is followed to its result: polled on the Clock, cancelled with `tasks/cancel` when the call is interrupted (see {@link TasksApi}).
   *
   * @example
   * ```ts
   * import * as McpClient from "@effect-mcp/client/McpClient"
   * import * as Effect from "effect/Effect"
   * import * as Schema from "effect/Schema"
   *
   * class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { id: Schema.String }) {}
   *
   * export const user = Effect.gen(function* () {
   *   const client = yield* McpClient.McpClient
   *   const result = yield* client.callTool(
   *     "get_user",
   *     { id: "7" },
   *     { outputSchema: Schema.Struct({ name: Schema.String }), failure: NotFound, timeout: "5 seconds" }
   *   )
   *   return result.structuredContent.name
   * }).pipe(Effect.catchTag("NotFound", (e) => Effect.succeed(`no user ${e.id}`)))
   * ```
   */
  readonly callTool: {
    <A, E>(
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: CallToolOptions<A, E> & {
        readonly outputSchema: Schema.Decoder<A>
        readonly failure: Schema.Decoder<E>
      }
    ): Effect.Effect<StructuredToolResult<A>, ToolCallError | E>
    <A>(
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: CallToolOptions<A> & { readonly outputSchema: Schema.Decoder<A> }
    ): Effect.Effect<StructuredToolResult<A>, ToolCallError>
    <E>(
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: CallToolOptions<unknown, E> & { readonly failure: Schema.Decoder<E> }
    ): Effect.Effect<Tools.CallToolResult, CallError | E>
    (
      name: string,
      args?: { readonly [key: string]: unknown } | undefined,
      options?: CallToolOptions
    ): Effect.Effect<Tools.CallToolResult, CallError>
  }
  /**
   * The call as progress updates, then the result. Interrupting the stream cancels the call.
   *
   * @example
   * ```ts
   * import * as McpClient from "@effect-mcp/client/McpClient"
   * import * as Console from "effect/Console"
   * import * as Effect from "effect/Effect"
   * import * as Stream from "effect/Stream"
   *
   * export const watched = Effect.gen(function* () {
   *   const client = yield* McpClient.McpClient
   *   yield* client.callToolWithProgress("build", {}).pipe(
   *     Stream.take(10), // ending the Stream early cancels the call on the server
   *     Stream.runForEach((event) =>
   *       event._tag === "Progress" ? Console.log(event.update.progress) : Console.log(event.value.content)
   *     )
   *   )
   * })
   * ```
   */
  readonly callToolWithProgress: {
    <A, E>(
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: CallToolOptions<A, E> & {
        readonly outputSchema: Schema.Decoder<A>
        readonly failure: Schema.Decoder<E>
      }
    ): Stream.Stream<ProgressEvent<StructuredToolResult<A>>, ToolCallError | E>
    <A>(
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: CallToolOptions<A> & { readonly outputSchema: Schema.Decoder<A> }
    ): Stream.Stream<ProgressEvent<StructuredToolResult<A>>, ToolCallError>
    <E>(
      name: string,
      args: { readonly [key: string]: unknown } | undefined,
      options: CallToolOptions<unknown, E> & { readonly failure: Schema.Decoder<E> }
    ): Stream.Stream<ProgressEvent<Tools.CallToolResult>, CallError | E>
    (
      name: string,
      args?: { readonly [key: string]: unknown } | undefined,
      options?: CallToolOptions
    ): Stream.Stream<ProgressEvent<Tools.CallToolResult>, CallError>
  }

  /** One page of `resources/list`. */
  readonly listResources: (
    cursor?: string,
    options?: RequestOptions
  ) => Effect.Effect<Resources.ListResourcesResult, CallError>
  readonly resources: Stream.Stream<Resources.Resource, ListError>
  /** One page of `resources/templates/list`. */
  readonly listResourceTemplates: (
    cursor?: string,
    options?: RequestOptions
  ) => Effect.Effect<Resources.ListResourceTemplatesResult, CallError>
  readonly resourceTemplates: Stream.Stream<Resources.ResourceTemplate, ListError>
  /** Reads a resource (`resources/read`); a URI the server does not know fails with `McpError.ResourceNotFound` (or `InvalidParams` on 2026-07-28). */
  readonly readResource: (
    uri: string,
    options?: RequestOptions
  ) => Effect.Effect<Resources.ReadResourceResult, CallError>
  /**
   * Updates of a resource while the stream runs: `resources/subscribe` /
   * `resources/unsubscribe` around it, or a `subscriptions/listen` on 2026-07-28.
   */
  readonly resourceUpdates: (uri: string) => Stream.Stream<Resources.ResourceUpdatedParams, StreamError>
  /**
   * Subscribes to a resource for as long as the scope lasts, and succeeds once
   * the server has taken the subscription: its answer to `resources/subscribe`
   * (the URI is subscribed once however many follow it), or its
   * acknowledgement of the `subscriptions/listen` on 2026-07-28. A refusal
   * fails it with the server's error. The Stream gives the updates (to be run
   * within the scope); closing the scope unsubscribes.
   */
  readonly subscribeResource: (
    uri: string
  ) => Effect.Effect<Stream.Stream<Resources.ResourceUpdatedParams, StreamError>, StreamError, Scope.Scope>

  /** One page of `prompts/list`. */
  readonly listPrompts: (
    cursor?: string,
    options?: RequestOptions
  ) => Effect.Effect<Prompts.ListPromptsResult, CallError>
  readonly prompts: Stream.Stream<Prompts.Prompt, ListError>
  /** Gets a prompt's messages with its arguments (`prompts/get`). */
  readonly getPrompt: (
    name: string,
    args?: { readonly [key: string]: string } | undefined,
    options?: RequestOptions
  ) => Effect.Effect<Prompts.GetPromptResult, CallError>

  /** Asks for completions of one argument of a prompt or resource template (`completion/complete`). */
  readonly complete: (
    ref: Completion.CompletionReference,
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: { readonly [key: string]: string } } | undefined,
    options?: RequestOptions
  ) => Effect.Effect<Completion.CompleteResult, CallError>

  /**
   * Chooses the level of log messages: `logging/setLevel` on stateful
   * revisions; on 2026-07-28 the level is sent in every later request's `_meta`.
   */
  readonly setLoggingLevel: (level: Logging.LoggingLevel) => Effect.Effect<void, CallError>
  /** Log messages the server sends (`notifications/message`). */
  readonly logMessages: Stream.Stream<Logging.LoggingMessageParams>
  /** Progress of this client's requests that asked for it. */
  readonly progress: Stream.Stream<Progress>
  /** `notifications/*\/list_changed` of tools, prompts and resources (a listen stream on 2026-07-28). */
  readonly toolListChanged: Stream.Stream<void, StreamError>
  readonly promptListChanged: Stream.Stream<void, StreamError>
  readonly resourceListChanged: Stream.Stream<void, StreamError>

  /** Tasks (2025-11-25, or the Tasks extension on 2026-07-28): see {@link TasksApi}. */
  readonly tasks: TasksApi

  /** Any request, with the same gate and `input_required` handling; the result is not decoded. */
  readonly request: (
    method: string,
    params?: object | undefined,
    options?: RequestOptions
  ) => Effect.Effect<unknown, CallError>

  /**
   * Any request, sent once as given (with the same gate): on 2026-07-28 an
   * `input_required` result is returned as it came, its input requests
   * unanswered, for a caller that passes them on (a proxy: the `inputResponses`
   * and `requestState` of the retry are its to send). Params' own `_meta`
   * keys win over the client's (its declared capabilities, say). `onProgress`
   * receives the request's progress, which asking for it adds. Not decoded.
   */
  readonly requestOnce: (
    method: string,
    params?: object | undefined,
    options?: RequestOptions & { readonly onProgress?: ((update: Progress["update"]) => void) | undefined }
  ) => Effect.Effect<unknown, CallError>
}

/** The connected client as a service; `layer` provides it, `connect` makes more of them. */
export class McpClient extends Context.Service<McpClient, McpClientShape>()("@effect-mcp/client/McpClient") {}

// A lifecycle span is recorded but never made the ambient parent span: the
// fibers a client starts while connecting (the session's reader, the handlers
// of the server's requests) live as long as the client, and every span they
// made would otherwise hang under a connect span that ended long before.
const spanned = (
  options: Options,
  parent: Tracer.AnySpan | undefined
): Effect.Effect<McpClientShape, ClientSession.InitializeError, Transport.Transport | Scope.Scope> =>
  Effect.useSpan("McpClient.make", parent === undefined ? {} : { parent }, () => Internal.make(options))

/**
 * Connects and negotiates over the current transport. The optional handler
 * services found in the context decide what the client declares and answers.
 * Traced as the span `McpClient.make`, the handshake included (see
 * "Tracing" in docs/clients.md, which says how to turn spans off).
 */
export const make = (
  options: Options
): Effect.Effect<McpClientShape, ClientSession.InitializeError, Transport.Transport | Scope.Scope> =>
  spanned(options, undefined)

/**
 * A client over the current transport; building it performs the handshake.
 *
 * @example
 * ```ts
 * import * as McpClient from "@effect-mcp/client/McpClient"
 * import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Stream from "effect/Stream"
 *
 * const Client = McpClient.layer({ clientInfo: { name: "my-host", version: "1.0.0" } }).pipe(
 *   Layer.provide(NodeStdio.layerClient({ command: "node", args: ["server.js"] }))
 * )
 *
 * export const program = Effect.gen(function* () {
 *   const client = yield* McpClient.McpClient
 *   const tools = yield* Stream.runCollect(client.tools) // every page
 *   const result = yield* client.callTool("echo", { text: "hi" })
 *   return { revision: client.revision, tools, result }
 * }).pipe(Effect.provide(Client))
 * ```
 */
export const layer = (options: Options): Layer.Layer<McpClient, ClientSession.InitializeError, Transport.Transport> =>
  Layer.effect(McpClient, make(options))

/**
 * A client over a transport Layer of its own, for as long as the current
 * scope lasts: the way to hold several clients in one program, each under a
 * service of your own (the `McpClient` service holds one). The optional
 * handler services found in the context decide what it declares and answers.
 * Traced as the span `McpClient.connect` (starting the transport included),
 * with `McpClient.make` under it.
 *
 * @example
 * ```ts
 * import { McpClient } from "@effect-mcp/client"
 * import { NodeHttpClient, NodeStdio } from "@effect-mcp/platform-node"
 * import { Context, Effect, Layer } from "effect"
 *
 * class Files extends Context.Service<Files, McpClient.McpClientShape>()("app/Files") {}
 * class Search extends Context.Service<Search, McpClient.McpClientShape>()("app/Search") {}
 *
 * const clientInfo = { name: "my-host", version: "1.0.0" }
 * const Clients = Layer.mergeAll(
 *   Layer.effect(Files, McpClient.connect(NodeStdio.layerClient({ command: "files-server" }), { clientInfo })),
 *   Layer.effect(
 *     Search,
 *     McpClient.connect(NodeHttpClient.layerStreamableHttp({ url: "http://127.0.0.1:3000/mcp" }), { clientInfo })
 *   )
 * )
 *
 * const program = Effect.gen(function* () {
 *   const files = yield* Files
 *   const search = yield* Search
 *   return [yield* files.listTools(), yield* search.listTools()]
 * }).pipe(Effect.provide(Clients))
 * ```
 */
export const connect = <E, R>(
  transport: Layer.Layer<Transport.Transport, E, R>,
  options: Options
): Effect.Effect<McpClientShape, E | ClientSession.InitializeError, R | Scope.Scope> =>
  Effect.useSpan("McpClient.connect", (span) =>
    Effect.flatMap(Layer.build(transport), (context) => Effect.provideContext(spanned(options, span), context))
  )
