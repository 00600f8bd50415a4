/**
 * The server: registries of tools, resources, resource templates and prompts
 * (each item registered by a Layer or scope of its own and removed when it
 * closes), the live sessions, and a way to serve a session over the current
 * Transport. Capabilities are derived from what is registered; every change
 * of a list is announced to the sessions and `subscriptions/listen` streams
 * that can receive it.
 *
 * `McpServer.layer(options)` provides the service; feature Layers
 * (`Tool.layer`, `Resource.layer`, `ResourceTemplate.layer`, `Prompt.layer`)
 * register items; `McpServer.serve` / `McpServer.layerSession` run one session.
 */
import type * as Content from "@effect-mcp/protocol/Content"
import type * as Logging from "@effect-mcp/protocol/Logging"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as Revision from "@effect-mcp/protocol/Revision"
import type * as Peer from "@effect-mcp/engine/Peer"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as Session from "@effect-mcp/engine/Session"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Context from "effect/Context"
import * as Mac from "effect/crypto/Mac"
import * as SecureRandom from "effect/crypto/SecureRandom"
import * as WebCrypto from "effect/crypto/WebCrypto"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Scope from "effect/Scope"
import * as Handlers from "./internal/handlers.ts"
import * as RequestScope from "./internal/requestScope.ts"
import * as RequestState from "./internal/requestState.ts"
import * as Shape from "./internal/shape.ts"
import { Store } from "./internal/store.ts"
import type * as Prompt from "./Prompt.ts"
import type * as Resource from "./Resource.ts"
import type * as ResourceTemplate from "./ResourceTemplate.ts"
import type * as Tool from "./Tool.ts"

/** The kinds of items a server registers. */
export type Kind = "tool" | "resource" | "template" | "prompt"

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
  /** Capabilities declared even while nothing of their kind is registered (items may come later). */
  readonly declare?: ReadonlyArray<"tools" | "resources" | "prompts"> | undefined
  /** Extra capability entries (`experimental`, `extensions`). */
  readonly capabilities?: { readonly experimental?: object; readonly extensions?: object } | undefined
  readonly peer?: Peer.Options | undefined
}

/** A registered item and the services its handlers run with. */
export interface Registered<A> {
  readonly item: A
  /** The services of the code that registered it (what its handlers need). */
  readonly context: Context.Context<never>
}

/** A stateful session the server is serving. */
export interface SessionEntry {
  readonly session: Session.SessionShape
  /** Set by `logging/setLevel`. */
  logLevel: Logging.LoggingLevel | undefined
  /** URIs subscribed with `resources/subscribe` (made by the first one). */
  subscriptions: Set<string> | undefined
}

/** A 2026-07-28 `subscriptions/listen` stream. */
export interface Listener {
  readonly filter: Resources.SubscriptionFilter
  /** Sends one notification on the stream. */
  readonly notify: (method: string, params: object) => Effect.Effect<void>
}

/** The server's registries, sessions and notifications (see the functions of this module for the common uses). */
export interface McpServerShape {
  readonly info: Session.Implementation
  readonly options: Options
  readonly tools: Store<Registered<Tool.Tool<unknown>>>
  readonly resources: Store<Registered<Resource.Resource<unknown>>>
  readonly templates: Store<Registered<ResourceTemplate.ResourceTemplate<unknown>>>
  readonly prompts: Store<Registered<Prompt.Prompt<unknown>>>
  readonly sessions: Set<SessionEntry>
  readonly listeners: Set<Listener>
  readonly requestState: RequestState.Codec
  /** Completes when the server shuts down (ends `subscriptions/listen` streams gracefully). */
  readonly shutdown: Deferred.Deferred<void>
  /** Adds items of one kind until the scope closes; replaces items with the same key. */
  readonly add: (
    kind: Kind,
    items: ReadonlyArray<unknown>,
    context: Context.Context<never>
  ) => Effect.Effect<void, never, Scope.Scope>
  /** The capabilities to declare (shaped for `revision`, or revision-neutral). */
  readonly capabilities: (revision: Revision.RevisionSpec | undefined) => Session.Capabilities
  /** Sends `notifications/resources/updated` to the subscribers of `uri` (or of a resource it is under). */
  readonly resourceUpdated: (uri: string) => Effect.Effect<void>
  /** Sends `notifications/<kind>/list_changed` to everyone who can receive it. */
  readonly listChanged: (kind: "tools" | "resources" | "prompts") => Effect.Effect<void>
  /** Logs to every stateful session whose level lets `level` through. */
  readonly log: (level: Logging.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<void>
}

/** The server service; `layer` provides it, feature Layers register items with it. */
export class McpServer extends Context.Service<McpServer, McpServerShape>()("@effect-mcp/server/McpServer") {}

const listKind: { readonly [K in Kind]: "tools" | "resources" | "prompts" } = {
  tool: "tools",
  resource: "resources",
  template: "resources",
  prompt: "prompts"
}

const keyOf: { readonly [K in Kind]: (item: never) => string } = {
  tool: (t: Tool.Tool<unknown>) => t.name,
  resource: (r: Resource.Resource<unknown>) => r.uri,
  template: (t: ResourceTemplate.ResourceTemplate<unknown>) => t.uriTemplate,
  prompt: (p: Prompt.Prompt<unknown>) => p.name
}

const subscribedTo = (subscription: string, uri: string) =>
  uri === subscription || uri.startsWith(subscription.endsWith("/") ? subscription : `${subscription}/`)

/** Builds the server service (needs `Mac` for `requestState`; `layer` provides it). */
export const make = (options: Options): Effect.Effect<McpServerShape, never, Mac.Mac | Scope.Scope> =>
  Effect.gen(function* () {
    const info: Session.Implementation = {
      name: options.name,
      version: options.version,
      ...(options.title === undefined ? {} : { title: options.title }),
      ...(options.description === undefined ? {} : { description: options.description }),
      ...(options.websiteUrl === undefined ? {} : { websiteUrl: options.websiteUrl }),
      ...(options.icons === undefined ? {} : { icons: options.icons })
    }
    const requestState = yield* RequestState.make({ ttlMs: options.requestStateTtlMs ?? 10 * 60_000 })
    const shutdown = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(shutdown, undefined))
    const stores = {
      tool: new Store<Registered<Tool.Tool<unknown>>>(),
      resource: new Store<Registered<Resource.Resource<unknown>>>(),
      template: new Store<Registered<ResourceTemplate.ResourceTemplate<unknown>>>(),
      prompt: new Store<Registered<Prompt.Prompt<unknown>>>()
    }
    const sessions = new Set<SessionEntry>()
    const listeners = new Set<Listener>()
    const declared = new Set(options.declare ?? [])

    const filterKey = {
      tools: "toolsListChanged",
      resources: "resourcesListChanged",
      prompts: "promptsListChanged"
    } as const
    const listChanged = (kind: "tools" | "resources" | "prompts") =>
      Effect.suspend(() => {
        const method = `notifications/${kind}/list_changed`
        const targets: Array<Effect.Effect<void>> = []
        for (const entry of sessions) targets.push(Effect.ignore(entry.session.notify(method, {})))
        for (const listener of listeners)
          if (listener.filter[filterKey[kind]] === true) targets.push(listener.notify(method, {}))
        return Effect.all(targets, { discard: true })
      })

    const add = (kind: Kind, items: ReadonlyArray<unknown>, context: Context.Context<never>) =>
      Effect.gen(function* () {
        const store = stores[kind] as Store<Registered<unknown>>
        const entries = items.map((item) => store.put(keyOf[kind](item as never), { item, context }))
        yield* listChanged(listKind[kind])
        yield* Effect.addFinalizer(() =>
          Effect.suspend(() => {
            let removed = false
            for (const entry of entries) removed = store.remove(entry) || removed
            return removed ? listChanged(listKind[kind]) : Effect.void
          })
        )
      })

    // A declaration depends only on the revision and which kinds are present:
    // sessions declaring the same share one object (each keeps what it declared).
    // Stateless revisions ask on every request, so the lookup is a small index, not a string key.
    const declarations = new Map<string | undefined, Array<Session.Capabilities | undefined>>()
    const capabilities = (revision: Revision.RevisionSpec | undefined): Session.Capabilities => {
      const hasResources = stores.resource.size > 0 || stores.template.size > 0 || declared.has("resources")
      const hasPrompts = stores.prompt.size > 0 || declared.has("prompts")
      const hasCompletions = hasPrompts || stores.template.size > 0
      const hasTools = stores.tool.size > 0 || declared.has("tools")
      const index = (hasResources ? 1 : 0) | (hasPrompts ? 2 : 0) | (hasCompletions ? 4 : 0) | (hasTools ? 8 : 0)
      const version = revision?.version
      let byKinds = declarations.get(version)
      if (byKinds === undefined) {
        byKinds = []
        declarations.set(version, byKinds)
      }
      let shaped = byKinds[index]
      if (shaped === undefined) {
        shaped = Shape.capabilities(version, {
          ...options.capabilities,
          logging: {},
          ...(hasCompletions ? { completions: {} } : {}),
          ...(hasPrompts ? { prompts: { listChanged: true } } : {}),
          ...(hasResources ? { resources: { subscribe: true, listChanged: true } } : {}),
          ...(hasTools ? { tools: { listChanged: true } } : {})
        })
        byKinds[index] = shaped
      }
      return shaped
    }

    const resourceUpdated = (uri: string) =>
      Effect.suspend(() => {
        const targets: Array<Effect.Effect<void>> = []
        for (const entry of sessions) {
          if (entry.subscriptions !== undefined && [...entry.subscriptions].some((s) => subscribedTo(s, uri))) {
            targets.push(Effect.ignore(entry.session.notify("notifications/resources/updated", { uri })))
          }
        }
        for (const listener of listeners) {
          if ((listener.filter.resourceSubscriptions ?? []).some((s) => subscribedTo(s, uri))) {
            targets.push(listener.notify("notifications/resources/updated", { uri }))
          }
        }
        return Effect.all(targets, { discard: true })
      })

    const defaultLevel = options.defaultLogLevel === "off" ? undefined : (options.defaultLogLevel ?? "info")
    const log = (level: Logging.LoggingLevel, data: unknown, logger?: string) =>
      Effect.suspend(() => {
        const params = logger === undefined ? { level, data } : { level, logger, data }
        const targets: Array<Effect.Effect<void>> = []
        for (const entry of sessions) {
          const threshold = entry.logLevel ?? defaultLevel
          if (threshold !== undefined && Handlers.levelPasses(level, threshold)) {
            targets.push(Effect.ignore(entry.session.notify("notifications/message", params)))
          }
        }
        return Effect.all(targets, { discard: true })
      })

    return {
      info,
      options,
      tools: stores.tool,
      resources: stores.resource,
      templates: stores.template,
      prompts: stores.prompt,
      sessions,
      listeners,
      requestState,
      shutdown,
      add,
      capabilities,
      resourceUpdated,
      listChanged,
      log
    } satisfies McpServerShape
  })

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
const sessionOptions = new WeakMap<McpServerShape, ServerSession.Options>()
const sessionOptionsOf = (server: McpServerShape): ServerSession.Options => {
  let options = sessionOptions.get(server)
  if (options === undefined) {
    options = {
      serverInfo: server.info,
      capabilities: server.capabilities,
      ...(server.options.instructions === undefined ? {} : { instructions: server.options.instructions }),
      ...(server.options.supportedVersions === undefined
        ? {}
        : { supportedVersions: server.options.supportedVersions }),
      handlers: Handlers.make(server),
      discoverCacheHints: server.options.cache?.list,
      peer: server.options.peer
    }
    sessionOptions.set(server, options)
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
 * A session's entry in `server.sessions`. Its scope finalizer is a method
 * bound to it rather than a closure over the session's services: a server
 * holds many idle sessions.
 */
class Entry implements SessionEntry {
  session: Session.SessionShape = undefined as never
  logLevel: Logging.LoggingLevel | undefined = undefined
  subscriptions: Set<string> | undefined = undefined
  private readonly server: McpServerShape

  constructor(server: McpServerShape) {
    this.server = server
  }

  remove(): Effect.Effect<void> {
    return Effect.sync(() => {
      this.server.sessions.delete(this)
    })
  }
}

/**
 * Starts a session over the current transport, served from the registries
 * (read live on every request). It lives until the scope closes.
 */
export const makeSession: Effect.Effect<Session.SessionShape, never, McpServer | Transport.Transport | Scope.Scope> =
  Effect.gen(function* () {
    const server = yield* McpServer
    const scope = yield* Scope.Scope
    const entry = new Entry(server)
    const session = yield* ServerSession.make(sessionOptionsOf(server)).pipe(
      // The session's fibers inherit the bridge and find their session entry in their context.
      Effect.updateContext((context: Context.Context<Scope.Scope | Transport.Transport>) =>
        Context.add(
          Context.add(context, Logger.CurrentLoggers, withBridge(Context.get(context, Logger.CurrentLoggers))),
          Handlers.CurrentEntry,
          entry
        )
      )
    )
    entry.session = session
    server.sessions.add(entry)
    yield* Scope.addFinalizerExit(scope, entry.remove.bind(entry))
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

/** Sends `notifications/resources/updated` for `uri` to its subscribers. */
export const resourceUpdated = (uri: string): Effect.Effect<void, never, McpServer> =>
  McpServer.use((server) => server.resourceUpdated(uri))

/** Logs to every stateful session (outside of a request; inside one, use `ServerRequest.log` or `Effect.log`). */
export const log = (
  level: Logging.LoggingLevel,
  data: unknown,
  logger?: string
): Effect.Effect<void, never, McpServer> => McpServer.use((server) => server.log(level, data, logger))
