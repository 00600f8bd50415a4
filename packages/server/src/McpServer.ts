/**
 * The server: registries of tools, resources, resource templates and prompts
 * (each item registered by a Layer or scope of its own and removed when it
 * closes), the live sessions, and a way to serve a session over the current
 * Transport. Capabilities are derived from what is registered; every change
 * of a list is announced to the sessions and `subscriptions/listen` streams
 * that can receive it, without waiting on any of them.
 *
 * The service shows what code outside handlers needs (identity,
 * capabilities, registration, the notifications it sends, a hook for roots
 * changes); the registries and sessions behind it are internal.
 *
 * `McpServer.layer(options)` provides the service; feature Layers
 * (`Tool.layer`, `Resource.layer`, `ResourceTemplate.layer`, `Prompt.layer`)
 * register items; `McpServer.serve` / `McpServer.layerSession` run one session.
 */
import type * as Content from "@effect-mcp/protocol/Content"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Revision from "@effect-mcp/protocol/Revision"
import type * as Roots from "@effect-mcp/protocol/Roots"
import type * as Tools from "@effect-mcp/protocol/Tools"
import type * as Peer from "@effect-mcp/engine/Peer"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import { CurrentHttpSession } from "@effect-mcp/http/CurrentHttpSession"
import * as Context from "effect/Context"
import * as Mac from "effect/crypto/Mac"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as WebCrypto from "effect/crypto/WebCrypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Handlers from "./internal/handlers.ts"
import * as Middleware from "./internal/middleware.ts"
import { Readiness } from "./internal/readiness.ts"
import * as RequestScope from "./internal/requestScope.ts"
import * as Server from "./internal/server.ts"
import * as SpanTarget from "./internal/spanTarget.ts"
import type * as RequestStateKeys from "./RequestStateKeys.ts"
import type * as Resource from "./Resource.ts"
import type * as Task from "./Task.ts"
import type { ClientRequestError } from "./ServerRequest.ts"

/** The kinds of items a server registers. */
export type Kind = "tool" | "resource" | "template" | "prompt" | "skill"

/** The server's identity, limits and revisions. */
export interface Options {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly websiteUrl?: string | undefined
  readonly icons?: Content.Icons | undefined
  readonly instructions?: string | undefined
  /** Items per page of every list method. Default 100. */
  readonly pageSize?: number | undefined
  /** 2026-07-28 cache hints of list results and of reads (a resource may set its own). Default: `ttlMs: 0`, private. */
  readonly cache?:
    | { readonly list?: Resource.Cache | undefined; readonly read?: Resource.Cache | undefined }
    | undefined
  /** Level of `notifications/message` for stateful clients that never sent `logging/setLevel`. Default "info"; "off" sends none. */
  readonly defaultLogLevel?: Logging.LoggingLevel | "off" | undefined
  /** Revisions served. Default: all. */
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  /** Lifetime of a 2026-07-28 `requestState`. Default 10 minutes. */
  readonly requestStateTtlMs?: number | undefined
  /**
   * Keys of 2026-07-28 `requestState`, the first signing and each opening
   * (see `RequestStateKeys`: give every process of a deployment the same).
   * Default: the `RequestStateKeys` service when provided, else a random key
   * of this server, so a state opens on this process only.
   */
  readonly requestStateKeys?: ReadonlyArray<RequestStateKeys.Key> | undefined
  /**
   * Capabilities declared even while nothing of their kind is registered (items may come later); `"skills"`
   * declares the Skills extension (and `resources`) for skills registered at run time.
   */
  readonly declare?: ReadonlyArray<"tools" | "resources" | "prompts" | "skills"> | undefined
  /** How tasks run: retention, polling interval, worker heartbeat (docs/tasks.md). */
  readonly tasks?: Task.Settings | undefined
  /**
   * Whether `resources.subscribe` is declared along with `resources`, asked each time capabilities are declared
   * (a gateway declares it while one of its upstreams supports subscriptions). Default: always.
   */
  readonly resourceSubscriptions?: (() => boolean) | undefined
  /**
   * Whether a subscriber is told that `uri` was updated, asked of each
   * recipient of each `resourceUpdated` (and `deliver`ed update): every
   * session subscribed to `uri` or a URI it is under, with the principal its
   * transport authenticated (the owner an HTTP session is bound to), and
   * every 2026-07-28 `subscriptions/listen` stream following it, with the
   * principal of its request; `undefined` where the transport does not
   * authenticate. A refused recipient is sent nothing. A subscription
   * covers the URIs under the one subscribed, so a check when a client
   * subscribes cannot tell which URIs it will be told of: this one is made
   * as each update is announced. `resourceUpdated` waits for the answers
   * (not for the sends), so keep it quick. The gateway passes its policy
   * here. Default: every subscriber is told.
   */
  readonly resourceUpdateVisible?:
    | ((uri: string, principal: Transport.Authenticated | undefined) => Effect.Effect<boolean>)
    | undefined
  /**
   * The most resources one stateful session may be subscribed to at once (`resources/subscribe` of distinct
   * URIs; subscribing to one held already is no new one), and the most distinct URIs one 2026-07-28
   * `subscriptions/listen` may name. Each is kept and looked at on every `resourceUpdated`: unbounded, one
   * client could grow the server without end. One past it is refused with -32029 (`Middleware.Code.RateLimited`,
   * `data: { maxSubscriptions }`); the session keeps what it held, and `resources/unsubscribe` makes room.
   * Default 1000.
   */
  readonly maxSubscriptions?: number | undefined
  /** Extra capability entries (`experimental`, `extensions`). */
  readonly capabilities?: { readonly experimental?: object; readonly extensions?: object } | undefined
  readonly peer?: Peer.Options | undefined
  /**
   * What the server waits for before it answers: `initialize` and
   * `server/discover` (so the capabilities declared include what came
   * meanwhile) and every request but `ping`, until it has once completed.
   * Each waiting request runs it: give a wait on a signal (a `Latch`'s or a
   * `Deferred`'s `await`), and bound it, as the clients' deadlines run
   * meanwhile. The gateway's waits for its upstreams' first connections.
   * Default: none.
   */
  readonly ready?: Effect.Effect<void> | undefined
}

/** A client's roots changed (`notifications/roots/list_changed`): who, and how to ask for the new ones. */
export interface RootsChange {
  /** The client that sent the notification, as it introduced itself at `initialize`. */
  readonly clientInfo: Session.Implementation | undefined
  /** Asks that client for its roots now (`roots/list` on its session). */
  readonly list: Effect.Effect<ReadonlyArray<Roots.Root>, ClientRequestError>
}

/** A change a server announces to its sessions and `subscriptions/listen` streams (see `McpServerShape.onChange`). */
export type Change =
  | { readonly _tag: "ListChanged"; readonly kind: "tools" | "resources" | "prompts" }
  | { readonly _tag: "ResourceUpdated"; readonly uri: string }
  /**
   * A task's status changed (written to the `TaskStore`). Delivered where the
   * store is shared, it tells the `subscriptions/listen` streams that asked
   * for the task, and interrupts the task's work if it runs there and was
   * ended elsewhere (cancelled).
   */
  | { readonly _tag: "TaskStatus"; readonly taskId: string }
  /**
   * Input for a task (`tasks/update`, 2026-07-28) that a process other than
   * the one running it received: delivered there, it answers the task's asks.
   */
  | { readonly _tag: "TaskInput"; readonly taskId: string; readonly responses: { readonly [key: string]: unknown } }

/** The server as its users see it: identity, capabilities, registration and the notifications it sends. */
export interface McpServerShape {
  readonly info: Session.Implementation
  /**
   * The capabilities to declare (shaped for `revision`, or revision-neutral). `carriesUnsolicited: false`
   * (default true) is for a session whose transport has no channel for what the server sends outside a request
   * (a `stateless` Streamable HTTP server's): on the stateful revisions nothing that promises such notifications
   * (`listChanged`, `resources.subscribe`) is declared to it.
   */
  readonly capabilities: (
    revision: Revision.RevisionSpec | undefined,
    carriesUnsolicited?: boolean
  ) => Session.Capabilities
  /**
   * Adds items of one kind with the services their handlers run with, until
   * the scope closes; replaces items with the same key (`Tool.register` and
   * the other feature modules call it).
   */
  readonly register: (
    kind: Kind,
    items: ReadonlyArray<unknown>,
    context: Context.Context<never>
  ) => Effect.Effect<void, never, Scope.Scope>
  /** The definition `tools/list` advertises for the tool registered as `name`, if any. */
  readonly toolDefinition: (name: string) => Tools.Tool | undefined
  /** How many stateful sessions the server is serving. */
  readonly sessionCount: () => number
  /**
   * Sends `notifications/<kind>/list_changed` to everyone who can receive it.
   * Waits on no one: each session gets it as soon as its transport takes it.
   */
  readonly listChanged: (kind: "tools" | "resources" | "prompts") => Effect.Effect<void>
  /** Sends `notifications/resources/updated` to the subscribers of `uri` (or of a resource it is under). */
  readonly resourceUpdated: (uri: string) => Effect.Effect<void>
  /**
   * Runs `hook` after every change this server announces (`listChanged`,
   * `resourceUpdated`, a registration or removal, a task's new status), until the scope closes:
   * a server spread over processes publishes them to the others (see
   * `@effect-mcp/cluster`'s ChangeFeed). Changes brought by `deliver` do not run it.
   */
  readonly onChange: (hook: (change: Change) => Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Announces a change another process made to this server's sessions and
   * `subscriptions/listen` streams, as if it had happened here, without
   * running the `onChange` hooks (so it is not published again).
   */
  readonly deliver: (change: Change) => Effect.Effect<void>
  /** Logs to every stateful session whose level lets `level` through. */
  readonly log: (level: Logging.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<void>
  /** Runs `hook` on every `notifications/roots/list_changed` a client sends, until the scope closes. */
  readonly onRootsListChanged: (
    hook: (change: RootsChange) => Effect.Effect<void>
  ) => Effect.Effect<void, never, Scope.Scope>
}

/** The server service; `layer` provides it, feature Layers register items with it. */
export class McpServer extends Context.Service<McpServer, McpServerShape>()("@effect-mcp/server/McpServer") {}

/**
 * Builds the server service (needs `Mac` for `requestState`; `layer` provides
 * it). Traced as the span `McpServer.make`; sessions and requests are not
 * (see "Serving" in docs/composing-servers.md).
 */
export const make: (options: Options) => Effect.Effect<McpServerShape, never, Mac.Mac | Scope.Scope> = Effect.fn(
  "McpServer.make"
)((options: Options) => Effect.map(Server.make(options), (state) => state.service))

// Node loads its WebCrypto the first time `globalThis.crypto` is read, a few
// milliseconds of a stdio server's start; a server needs it only once it seals
// a request state, so the crypto layers get a WebCrypto that reads it on use.
type WebCryptoShape = typeof WebCrypto.WebCrypto extends Context.Reference<infer S> ? S : never
const platformCrypto = (): WebCryptoShape => (globalThis as unknown as { readonly crypto: WebCryptoShape }).crypto
const webCryptoOnUse = {
  get subtle() {
    return platformCrypto().subtle
  },
  getRandomValues: (...args: Parameters<WebCryptoShape["getRandomValues"]>) =>
    platformCrypto().getRandomValues(...args),
  randomUUID: () => platformCrypto().randomUUID()
} as WebCryptoShape

/**
 * The server service.
 *
 * @example
 * ```ts
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Tool from "@effect-mcp/server/Tool"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 *
 * const Echo = Tool.make("echo", {
 *   input: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 *
 * // Feature Layers register their items with the server below them.
 * export const Server = Tool.layer(Echo).pipe(
 *   Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0", instructions: "Echoes text" }))
 * )
 * ```
 */
export const layer = (options: Options): Layer.Layer<McpServer> =>
  Layer.effect(McpServer, make(options)).pipe(
    Layer.provide(Mac.layerWebCrypto),
    Layer.provide(SecureRandom.layerWebCrypto),
    Layer.provide(WebCrypto.layer(webCryptoOnUse))
  )

// Everything a server's sessions are made from is the same for all of them: made once per server.
const sessionOptions = new WeakMap<Server.State, ServerSession.Options>()
const sessionOptionsOf = (state: Server.State): ServerSession.Options => {
  let options = sessionOptions.get(state)
  if (options === undefined) {
    const handlers = Handlers.make(state)
    const readiness = state.options.ready === undefined ? undefined : new Readiness(state.options.ready)
    options = {
      serverInfo: state.info,
      capabilities: state.capabilities,
      ...(state.options.instructions === undefined ? {} : { instructions: state.options.instructions }),
      ...(state.options.supportedVersions === undefined ? {} : { supportedVersions: state.options.supportedVersions }),
      // Middleware Layers may come and go: the wrappers read the server's chain on each request.
      handlers: Middleware.wrapAll(state.service, handlers.requests, readiness),
      notificationHandlers: handlers.notifications,
      ready: readiness?.wait,
      discoverCacheHints: state.options.cache?.list,
      // A traced request's span names a tool or prompt only when the server has it: a client picks the name.
      spanTarget: SpanTarget.make(state),
      peer: state.options.peer
    }
    sessionOptions.set(state, options)
  }
  return options
}

// The same for the sessions whose transport cannot carry what the server sends outside a request.
const withoutUnsolicited = new WeakMap<Server.State, ServerSession.Options>()

/**
 * The options of a session whose transport cannot carry what the server sends outside a request: it declares
 * what `state.capabilities` gives without that.
 */
const sessionOptionsWithoutUnsolicited = (state: Server.State): ServerSession.Options => {
  let options = withoutUnsolicited.get(state)
  if (options === undefined) {
    options = { ...sessionOptionsOf(state), capabilities: (revision) => state.capabilities(revision, false) }
    withoutUnsolicited.set(state, options)
  }
  return options
}

// The loggers of a session: those it inherits plus the bridge of handlers' log
// lines to the client. Sessions inheriting the same set share one.
const bridged = new WeakMap<
  ReadonlySet<Logger.Logger<unknown, unknown>>,
  ReadonlySet<Logger.Logger<unknown, unknown>>
>()
const withBridge = (loggers: ReadonlySet<Logger.Logger<unknown, unknown>>) => {
  let set = bridged.get(loggers)
  if (set === undefined) {
    set = new Set([...loggers, RequestScope.bridge])
    bridged.set(loggers, set)
  }
  return set
}

/**
 * A session's entry in the server's sessions, found by its Peer. The entry
 * leaves when the Peer closes, through the server's one `forgetSession` hook:
 * no closure, bound method or finalizer per session (a server holds many
 * idle sessions).
 */
class Entry implements Server.SessionEntry {
  session: Session.SessionShape = undefined as never
  readonly transport: Transport.TransportShape
  constructor(transport: Transport.TransportShape) {
    this.transport = transport
  }
}

/**
 * Starts a session over the current transport, served from the registries
 * (read live on every request). It lives until the scope closes.
 */
export const makeSession: Effect.Effect<Session.SessionShape, never, McpServer | Transport.Transport | Scope.Scope> =
  Effect.gen(function* () {
    const state = Server.stateOf(yield* McpServer)
    if (state === undefined)
      return yield* Effect.die(
        new Error("McpServer.makeSession serves a server built by McpServer.make or McpServer.layer")
      )
    // The HTTP transports say whether the session has a channel for what the server sends on its own (a
    // stateless request's session has none); any other transport has one.
    const http = yield* Effect.serviceOption(CurrentHttpSession)
    const options =
      Option.isSome(http) && http.value.carriesUnsolicited === false
        ? sessionOptionsWithoutUnsolicited(state)
        : sessionOptionsOf(state)
    // The transport says whom the session's requests come from (the principal it is bound to).
    const entry = new Entry(yield* Transport.Transport)
    const session = yield* ServerSession.make(options).pipe(
      // The session's fibers inherit the bridge and find their session entry in their context.
      Effect.updateContext((context: Context.Context<Scope.Scope | Transport.Transport>) =>
        Context.add(
          Context.add(context, Logger.CurrentLoggers, withBridge(Context.get(context, Logger.CurrentLoggers))),
          Server.CurrentEntry,
          entry
        )
      )
    )
    entry.session = session
    state.sessions.set(session.peer, entry)
    // Forgotten as the session closes (its scope closing closes it): no finalizer of its own in the scope.
    session.peer.onClose(state.forgetSession)
    return session
  })

/** Serves one session over the current transport until the connection closes. */
export const serve: Effect.Effect<void, never, McpServer | Transport.Transport> = Effect.scoped(
  Effect.flatMap(makeSession, (session) => Effect.asVoid(session.closed))
)

/** A session over the current transport for as long as the Layer lives. */
export const layerSession: Layer.Layer<Session.Session, never, McpServer | Transport.Transport> = Layer.effect(
  Session.Session,
  makeSession
)

/**
 * The scopes a request needs, from the items registered now: a tool's
 * `scopes` for `tools/call`, a prompt's for `prompts/get`, a resource's (or,
 * for a URI no fixed resource has, the first matching template's) for
 * `resources/read`, `resources/subscribe` and `resources/unsubscribe`.
 * Undefined for anything else, an unknown item, or an item without scopes.
 * A protected HTTP server checks them before dispatch (`NodeMcpServer`
 * passes this as the transport's `requiredScopes`).
 *
 * @example
 * ```ts
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as Effect from "effect/Effect"
 *
 * export const scopesOfCall = (tool: string) =>
 *   Effect.gen(function* () {
 *     const server = yield* McpServer.McpServer
 *     return McpServer.requiredScopesOf(server)("tools/call", tool) // e.g. ["files:read"]
 *   })
 * ```
 */
export const requiredScopesOf = (
  server: McpServerShape
): ((method: string, target: string) => ReadonlyArray<string> | undefined) => {
  const state = Server.stateOf(server)
  if (state === undefined) return () => undefined
  return (method, target) => {
    switch (method) {
      case "tools/call":
        return state.tools.get(target)?.item.scopes
      case "prompts/get":
        return state.prompts.get(target)?.item.scopes
      case "resources/read":
      case "resources/subscribe":
      case "resources/unsubscribe": {
        const fixed = state.resources.get(target)
        if (fixed !== undefined) return fixed.item.scopes
        for (const entry of state.templates.sorted()) {
          if (entry.item.match(target) !== undefined) return entry.item.scopes
        }
        return undefined
      }
      default:
        return undefined
    }
  }
}

/** Sends `notifications/resources/updated` for `uri` to its subscribers. */
export const resourceUpdated = (uri: string): Effect.Effect<void, never, McpServer> =>
  McpServer.use((server) => server.resourceUpdated(uri))

/** Logs to every stateful session (outside of a request; inside one, use `ServerRequest.log` or `Effect.log`). */
export const log = (
  level: Logging.LoggingLevel,
  data: unknown,
  logger?: string
): Effect.Effect<void, never, McpServer> => McpServer.use((server) => server.log(level, data, logger))
