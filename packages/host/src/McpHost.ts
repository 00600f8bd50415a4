/**
 * A host of many MCP servers: each server of an `mcpServers` configuration
 * is a named, supervised connection (connected concurrently, reconnected or
 * respawned under a `Schedule` when lost), what they all offer is one
 * catalog under collision-safe names, and calls are routed by those names,
 * each server with its own limit of calls in flight and timeout.
 *
 * The client-side features are given once, for every server: the host
 * passes the `SamplingHandler`, `ElicitationHandler` and `RootsHandler`
 * services it finds when built to each connection, with the `Consent` hooks
 * in front. What each connection declared is in its `Ready` status; a
 * capability the host lacks is warned about in the log (a server may hide
 * the tools that need it: the reference server-everything does).
 *
 * See docs/hosts.md for a guide.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as Session from "@effect-mcp/engine/Session"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "./Catalog.ts"
import * as Connector from "./Connector.ts"
import type { HostError } from "./HostError.ts"
import * as McpConfig from "./McpConfig.ts"
import type * as Naming from "./Naming.ts"
import type * as ServerStatus from "./ServerStatus.ts"
import * as Handlers from "./internal/handlers.ts"
import * as Routes from "./internal/routes.ts"
import * as Supervisor from "./internal/supervisor.ts"

/** Per-server limits, overriding the host's. */
export interface ServerOptions {
  /** Calls in flight on this server at once; more wait for a turn. */
  readonly concurrency?: number | undefined
  /**
   * Timeout of each call routed to this server: the request's own (it is cancelled on the server when it runs
   * out), and the longest the call waits for a turn, and for a reconnect, before it is sent.
   */
  readonly callTimeout?: Duration.Input | undefined
  /** How long a connection to this server may take to be ready (a slow-starting process, a remote far away). */
  readonly startTimeout?: Duration.Input | undefined
}

/** How the host connects, supervises, names and routes. */
export interface Options {
  readonly clientInfo: Session.Implementation
  /** The servers: a decoded `mcpServers` configuration (`McpConfig.load`), or one built in code. */
  readonly config: McpConfig.Config
  /** The rest of each client's options (revisions, Peer limits, handshake timeout, ...). */
  readonly client?: Omit<McpClient.Options, "clientInfo"> | undefined
  /**
   * How long a connection may take to be ready (spawning a process, the transport, the handshake, the first
   * listing). A server still silent then (an HTTP server that accepts and never answers, one that answers the
   * handshake and then nothing) is `Degraded` and retried under `reconnect`, while the others serve. Default 30
   * seconds.
   */
  readonly startTimeout?: Duration.Input | undefined
  /**
   * When to connect again after a connection was lost or could not be made;
   * its input is the failure. When it ends, the server is `Failed` until
   * `restart`. Default `backoff()`: 500 ms doubling up to 30 s, 10 retries.
   */
  readonly reconnect?: Schedule.Schedule<unknown, ServerStatus.Failure> | undefined
  /** A connection that stayed up this long starts the reconnect schedule over. Default 30 seconds. */
  readonly stableAfter?: Duration.Input | undefined
  /**
   * The health check (`ping`, or `server/discover` on 2026-07-28): every
   * `interval` (default 30 s), each answered within `timeout` (default 10 s);
   * `failures` failed checks in a row (default 2) count as a lost connection
   * (one makes the server `Degraded`). `false` turns it off.
   */
  readonly healthCheck?:
    | false
    | {
        readonly interval?: Duration.Input | undefined
        readonly timeout?: Duration.Input | undefined
        readonly failures?: number | undefined
      }
    | undefined
  /**
   * The least time between two listings of one list that `list_changed` asked for. The first change after a
   * quiet spell is listed at once; the changes announced in the interval after a listing are listed together
   * when it ends, so a server announcing changes in a loop costs the host one listing per interval, not one per
   * announcement. `0` lists again as soon as the listing under way ends. Default 1 second.
   */
  readonly relistInterval?: Duration.Input | undefined
  /** Catalog names of tools and prompts (default: always `server__name`). */
  readonly naming?: Naming.Options | undefined
  /** Calls in flight per server. Default 16. */
  readonly concurrency?: number | undefined
  /**
   * Timeout of each routed call: the request's own, and the longest it waits for a turn and for a reconnect.
   * Default: the client's request timeout, for the request and for each wait.
   */
  readonly callTimeout?: Duration.Input | undefined
  /** Per-server limits by server name. */
  readonly servers?: { readonly [name: string]: ServerOptions } | undefined
}

/** Options of a routed call. */
export interface CallOptions extends McpClient.RequestOptions {}

/** What a routed call can fail with: the client's errors, or the host's own. */
export type CallError = McpClient.CallError | HostError

/** The running host. */
export interface McpHostShape {
  /** The configured servers' names, in configuration order. */
  readonly servers: ReadonlyArray<string>
  /** A server's current status. */
  readonly status: (server: string) => Effect.Effect<ServerStatus.ServerStatus, HostError>
  /** Every server's current status, then every change as it happens. */
  readonly statusChanges: Stream.Stream<ServerStatus.StatusChange>
  /**
   * Waits until the server is ready (fails with `Unavailable` once it is `Failed`, as every server is once the
   * host is closed).
   */
  readonly awaitReady: (server: string) => Effect.Effect<ServerStatus.Connection, HostError>
  /** A server's connected client, for anything the host does not route (waits until it is ready). */
  readonly client: (server: string) => Effect.Effect<McpClient.McpClientShape, HostError>
  /** The catalog now. */
  readonly catalog: Effect.Effect<Catalog.Catalog>
  /** The catalog now, then each new one (after a connection, a loss or a `list_changed`). */
  readonly catalogChanges: Stream.Stream<Catalog.Catalog>
  /** Every tool under its catalog name, as a model should see them (MCP Apps' app-only tools left out). */
  readonly tools: Effect.Effect<ReadonlyArray<Tools.Tool>>
  /**
   * Calls a tool by catalog name on its server (after the consent hook
   * approved it). Interrupting the call cancels it on the server.
   */
  readonly callTool: (
    name: string,
    args?: { readonly [key: string]: unknown } | undefined,
    options?: CallOptions
  ) => Effect.Effect<Tools.CallToolResult, CallError>
  /** The call as progress updates, then its result; ending the Stream early cancels the call. */
  readonly callToolWithProgress: (
    name: string,
    args?: { readonly [key: string]: unknown } | undefined,
    options?: CallOptions
  ) => Stream.Stream<McpClient.ProgressEvent<Tools.CallToolResult>, CallError>
  /**
   * Calls a tool by catalog name as a task (consent and routing as `callTool`) and follows it: each new
   * status, then the result. Ending the Stream before the result cancels the task. A plain `callTool`
   * already runs a tool its server requires as a task; this is for callers that want the statuses.
   */
  readonly callToolAsTask: (
    name: string,
    args?: { readonly [key: string]: unknown } | undefined,
    options?: McpClient.TaskCallOptions
  ) => Stream.Stream<McpClient.TaskEvent<Tools.CallToolResult>, CallError>
  /**
   * A server's tasks (in the form its session speaks), to get, follow, list or cancel them; waits until the
   * server is ready, and is the current connection's (a task id may mean nothing to the next one).
   */
  readonly tasks: (server: string) => Effect.Effect<McpClient.TasksApi, HostError>
  /** Gets a prompt by catalog name. */
  readonly getPrompt: (
    name: string,
    args?: { readonly [key: string]: string } | undefined,
    options?: CallOptions
  ) => Effect.Effect<Prompts.GetPromptResult, CallError>
  /**
   * Reads a resource from the server listing its URI (or with a template it
   * fits); `server` chooses when several do.
   */
  readonly readResource: (
    uri: string,
    options?: CallOptions & { readonly server?: string | undefined }
  ) => Effect.Effect<Resources.ReadResourceResult, CallError>
  /**
   * Runs `f` on the connection serving the tool or prompt `name` (a catalog name), or the resource `name` (a URI),
   * routed, approved and bounded as `callTool`, `getPrompt` and `readResource` are (the server's turn; its call
   * timeout, in `f`'s options; for a resource, `server` chooses when several serve it); `f` gets the item's own
   * name. For requests passed on as they came (`McpClient.requestOnce`: a proxy's).
   */
  readonly route: <A>(
    kind: "tool" | "prompt" | "resource",
    name: string,
    args: { readonly [key: string]: unknown } | undefined,
    f: (
      client: McpClient.McpClientShape,
      name: string,
      options: CallOptions | undefined
    ) => Effect.Effect<A, McpClient.CallError>,
    options?: CallOptions & { readonly server?: string | undefined }
  ) => Effect.Effect<A, CallError>
  /**
   * Ends a server's connection (or the wait of a failed one) and connects again, the schedule started over. The
   * status says `Connecting` as the old connection starts to close; calls wait for the new one.
   */
  readonly restart: (server: string) => Effect.Effect<void, HostError>
}

/** The host as a service; `layer` provides it. */
export class McpHost extends Context.Service<McpHost, McpHostShape>()("@effect-mcp/host/McpHost") {}

/**
 * The default reconnect schedule's shape: `base` doubling up to `cap`, at
 * most `times` retries in a row.
 */
export const backoff = (
  options: {
    readonly base?: Duration.Input | undefined
    readonly cap?: Duration.Input | undefined
    readonly times?: number | undefined
  } = {}
): Schedule.Schedule<Duration.Duration> => {
  return Schedule.min([
    Schedule.exponential(options.base ?? "500 millis"),
    Schedule.spaced(options.cap ?? "30 seconds")
  ]).pipe(Schedule.upTo({ times: options.times ?? 10 }))
}

/**
 * Starts the host: every server connects concurrently in the background
 * (`awaitReady` waits for one). Closing the scope closes every connection
 * and stops every stdio server; every server is then `Failed` ("the host
 * was closed"), and whoever waits for one fails. The handler and `Consent` services in
 * context are used for every server.
 */
export const make = (options: Options): Effect.Effect<McpHostShape, never, Connector.Connector | Scope.Scope> =>
  Effect.gen(function* () {
    const connector = yield* Connector.Connector
    const handlers = yield* Handlers.fromContext
    const names = Object.keys(options.config.mcpServers)
    const statusChanges = yield* PubSub.unbounded<ServerStatus.StatusChange>()
    const catalogRef = yield* SubscriptionRef.make<Catalog.Catalog>(Catalog.empty)
    let tools = new Map<string, Catalog.Entry<Tools.Tool>>()
    let prompts = new Map<string, Catalog.Entry<Prompts.Prompt>>()
    const slots = new Map<string, Supervisor.Slot>()

    const rebuild = Effect.suspend(() => {
      const catalog = Catalog.make(
        names.map((name) => [name, slots.get(name)?.listing ?? Catalog.emptyListing] as const),
        options.naming
      )
      tools = new Map(catalog.tools.map((e) => [e.name, e]))
      prompts = new Map(catalog.prompts.map((e) => [e.name, e]))
      return SubscriptionRef.set(catalogRef, catalog)
    })

    const health = options.healthCheck === false ? undefined : options.healthCheck
    const settings: Supervisor.Settings = {
      clientOptions: { ...options.client, clientInfo: options.clientInfo },
      connect: connector.connect,
      handlers,
      startTimeout: Duration.fromInputUnsafe(options.startTimeout ?? "30 seconds"),
      reconnect: options.reconnect ?? backoff(),
      stableAfter: Duration.fromInputUnsafe(options.stableAfter ?? "30 seconds"),
      health:
        options.healthCheck === false
          ? undefined
          : {
              interval: Duration.fromInputUnsafe(health?.interval ?? "30 seconds"),
              timeout: Duration.fromInputUnsafe(health?.timeout ?? "10 seconds"),
              failures: Math.max(1, health?.failures ?? 2)
            },
      concurrency: options.concurrency ?? 16,
      relistInterval: Duration.fromInputUnsafe(options.relistInterval ?? "1 second"),
      statusChanges,
      onListing: rebuild,
      warnedCapabilities: new Set()
    }
    for (const name of names) {
      const own = options.servers?.[name]
      const startTimeout =
        own?.startTimeout === undefined ? settings.startTimeout : Duration.fromInputUnsafe(own.startTimeout)
      slots.set(
        name,
        yield* Supervisor.makeSlot(name, options.config.mcpServers[name]!, own?.concurrency ?? settings.concurrency, {
          startTimeout
        })
      )
    }
    // Made before the supervisors' scope, so closed after they are interrupted (finalizers run in reverse). Both
    // close in parallel: a stdio server that does not end on its stdin's end takes the transport's grace to stop,
    // which is not to be paid once per server. A connection a supervisor was releasing when interrupted (a lost
    // one, its process still stopping) is closed here too, with the others: its supervisor does not wait for it,
    // so the server is Failed and its waiters fail as the close begins, and the other connections (their calls
    // in flight) do not wait for it to close.
    const connections = yield* Scope.fork(yield* Effect.scope, "parallel")
    const supervisors = yield* Scope.fork(yield* Effect.scope, "parallel")
    for (const slot of slots.values()) {
      yield* Effect.forkIn(Supervisor.supervise(settings, slot, connections), supervisors)
    }

    const { slotOf, clientOf, route, streamedCall } = Routes.make({
      slots,
      tool: (name) => tools.get(name),
      prompt: (name) => prompts.get(name),
      serversForUri: (uri) =>
        Effect.map(SubscriptionRef.get(catalogRef), (catalog) => Catalog.serversForUri(catalog, uri)),
      consent: handlers.consent,
      options
    })

    const callTool: McpHostShape["callTool"] = (name, args, callOptions) =>
      route("tool", name, args, (client, tool, o) => client.callTool(tool, args, o), callOptions)

    const callToolWithProgress: McpHostShape["callToolWithProgress"] = (name, args, callOptions) =>
      streamedCall(name, args, callOptions, (client, tool, o) => client.callToolWithProgress(tool, args, o))

    const callToolAsTask: McpHostShape["callToolAsTask"] = (name, args, callOptions) =>
      streamedCall(name, args, callOptions, (client, tool, o) => client.tasks.run(tool, args, o))

    const getPrompt: McpHostShape["getPrompt"] = (name, args, callOptions) =>
      route("prompt", name, args, (client, prompt, o) => client.getPrompt(prompt, args, o), callOptions)

    const readResource: McpHostShape["readResource"] = (uri, callOptions) =>
      route("resource", uri, undefined, (client, _, o) => client.readResource(uri, o), callOptions)

    return McpHost.of({
      servers: names,
      status: (server) => Effect.flatMap(slotOf(server), (slot) => SubscriptionRef.get(slot.status)),
      statusChanges: Stream.unwrap(
        Effect.gen(function* () {
          // Subscribed before the snapshot is read: a change in between is seen (perhaps twice), never lost.
          const subscription = yield* PubSub.subscribe(statusChanges)
          const now: Array<ServerStatus.StatusChange> = []
          for (const [server, slot] of slots) now.push({ server, status: yield* SubscriptionRef.get(slot.status) })
          return Stream.concat(Stream.fromIterable(now), Stream.fromSubscription(subscription))
        })
      ),
      awaitReady: (server) =>
        Effect.flatMap(slotOf(server), (slot) =>
          Effect.flatMap(clientOf(slot), () =>
            Effect.flatMap(SubscriptionRef.get(slot.status), (status) =>
              status._tag === "Ready"
                ? Effect.succeed(status.connection)
                : Effect.fail(Routes.unavailable(server, status._tag))
            )
          )
        ),
      client: (server) => Effect.flatMap(slotOf(server), clientOf),
      catalog: SubscriptionRef.get(catalogRef),
      catalogChanges: SubscriptionRef.changes(catalogRef),
      tools: Effect.map(SubscriptionRef.get(catalogRef), (catalog) =>
        catalog.tools.filter(Catalog.forModel).map(Catalog.toolAsListed)
      ),
      callTool,
      route,
      callToolWithProgress,
      callToolAsTask,
      tasks: (server) => Effect.map(Effect.flatMap(slotOf(server), clientOf), (client) => client.tasks),
      getPrompt,
      readResource,
      restart: (server) => Effect.flatMap(slotOf(server), (slot) => Supervisor.requestRestart(settings, slot))
    })
  })

/**
 * The host as a Layer over a `Connector` (`NodeConnector.layer()` on Node).
 *
 * @example
 * ```ts
 * import * as McpConfig from "@effect-mcp/host/McpConfig"
 * import * as McpHost from "@effect-mcp/host/McpHost"
 * import * as NodeConnector from "@effect-mcp/host/NodeConnector"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 *
 * const config: McpConfig.Config = {
 *   mcpServers: { everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] } }
 * }
 * const Host = McpHost.layer({ clientInfo: { name: "my-host", version: "1.0.0" }, config }).pipe(
 *   Layer.provide(NodeConnector.layer())
 * )
 *
 * export const program = Effect.gen(function* () {
 *   const host = yield* McpHost.McpHost
 *   yield* host.awaitReady("everything")
 *   const tools = yield* host.tools // everything__echo, everything__get-sum, ...
 *   const result = yield* host.callTool("everything__echo", { message: "hi" })
 *   return { tools, result }
 * }).pipe(Effect.provide(Host))
 * ```
 */
export const layer = (options: Options): Layer.Layer<McpHost, never, Connector.Connector> =>
  Layer.effect(McpHost, make(options))

/** The host with its servers read from a configuration file (see `McpConfig.load`). */
export const layerConfigFile = (
  path: string,
  options: Omit<Options, "config">
): Layer.Layer<McpHost, McpConfig.ConfigError, Connector.Connector | FileSystem.FileSystem> =>
  Layer.effect(
    McpHost,
    Effect.flatMap(McpConfig.load(path), (config) => make({ ...options, config }))
  )
