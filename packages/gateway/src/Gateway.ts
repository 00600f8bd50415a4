/**
 * A gateway: many MCP servers behind one. It is an `McpServer` Layer built
 * from an `McpHost`: the host connects to every upstream of an `mcpServers`
 * configuration (stdio, Streamable HTTP, legacy SSE) and supervises them;
 * the server offers downstream clients one catalog of everything the
 * upstreams offer, and routes each request to its upstream. Serve it as any
 * server (`NodeMcpServer.serveHttp`, `serveStdio`), or with
 * `effect-mcp gateway --config <file>`.
 *
 * - **Names.** Tools and prompts are named with the host's `Naming`:
 *   `server__tool` by default, so a name never changes when another upstream
 *   comes or goes. `unprefixed` keeps one upstream's names as they are (the
 *   gateway in front of a single server, or of one main server and a few
 *   extras). Whatever the policy, names are unique: a name that would repeat
 *   (the bare name of the unprefixed upstream equal to another's prefixed
 *   one, say) gets `_2`, `_3`, ... in configuration order. Resources and
 *   templates keep their URIs; when two upstreams list the same one, the
 *   first in configuration order serves it.
 * - **Changes.** A `list_changed` of any upstream, a connection made or lost,
 *   rebuilds the catalog; each kind that changed is announced downstream as
 *   `list_changed`.
 * - **Calls.** `tools/call`, `prompts/get`, `resources/read` and
 *   `completion/complete` go to the upstream that listed the item.
 *   `resources/subscribe` too: each URI is subscribed once upstream
 *   however many downstream sessions subscribe to it, and the upstream's
 *   updates reach exactly those sessions (`resources.subscribe` is declared
 *   while an upstream supports it; a session holds at most
 *   `maxSubscriptions`). Progress
 *   the downstream client asked for is asked of the upstream and relayed;
 *   cancelling downstream (`notifications/cancelled`, or closing the
 *   session) interrupts the upstream call, which cancels it there. The log
 *   messages an upstream sends while it serves a call reach the caller (as
 *   asks do, below); those it sends outside any call reach no one.
 * - **Asks.** An upstream's sampling, elicitation and roots requests made
 *   while it serves a downstream call are asked of the client that made the
 *   call, on that call, and of no one else (how the gateway tells which client that is:
 *   see `Options`). With both sides on 2026-07-28 the upstream's
 *   `input_required` rounds pass through as they are (its keys, a round's
 *   asks at once), the client's retry going on to the upstream's retry with
 *   the upstream's `requestState`, which the gateway's own carries.
 * - **Credentials.** Each remote upstream gets its own credential
 *   (`Credentials`); a downstream request's headers never reach an upstream.
 *   An upstream that acts for the caller gets a token exchanged for the
 *   caller's, on a connection per caller (`tokenExchange`, `TokenExchange`).
 * - **Policy, limits, breaker, audit.** `policy` decides per principal which
 *   items are listed and callable (`Policy`); `limits` are `ToolLimits` on
 *   the gateway's tool calls; `circuitBreaker` opens a circuit per upstream
 *   (`CircuitBreaker`); `audit` records every routed request (`Audit`);
 *   `cache` keeps upstream reads as their 2026-07-28 cache hints allow. A
 *   read's answer carries the upstream's hints (what is left of them when
 *   served from the cache), a list the tightest of the upstreams' list
 *   hints (what is left of them), `private` wherever a policy decides.
 * - **Tasks.** A tool its upstream runs as a task takes tasks downstream
 *   too (the gateway declares 2025-11-25 `tasks`, or the Tasks extension on
 *   2026-07-28, while one does). A downstream task is the gateway's, bound
 *   to the principal (else the session) that made it, and its work is the
 *   upstream call made as a task and followed: `tasks/get`, `tasks/result`,
 *   `tasks/list` and `tasks/cancel` answer the caller's own tasks only, and
 *   cancelling one cancels the upstream's. Pass a `TaskStore` in the
 *   server's context for tasks that outlive a replica.
 * - **Skills.** The skills of the upstreams declaring the Skills extension
 *   are the gateway's: it declares the extension while it serves one, and
 *   answers `skills/list`, `skills/get` and `resources/directory/read` with
 *   the upstreams' entries, each file read from its upstream.
 * - **Large catalogs.** With `discovery`, `tools/list` lists three tools of
 *   the gateway's (search, details, call) instead of every upstream tool
 *   (`Discovery`).
 *
 * @example
 * ```ts
 * import * as Gateway from "@effect-mcp/gateway/Gateway"
 * import * as NodeConnector from "@effect-mcp/host/NodeConnector"
 * import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
 * import * as Layer from "effect/Layer"
 *
 * const Server = Gateway.layer({
 *   server: { name: "gateway", version: "1.0.0" },
 *   config: {
 *     mcpServers: { everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] } }
 *   }
 * }).pipe(Layer.provide(NodeConnector.layer()))
 *
 * export const main = NodeMcpServer.serveHttp(Server, { port: 3000 })
 * ```
 */
import type * as Connector from "@effect-mcp/host/Connector"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as Naming from "@effect-mcp/host/Naming"
import type * as Session from "@effect-mcp/engine/Session"
import type * as Logging from "@effect-mcp/protocol/Logging"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as ToolLimits from "@effect-mcp/server/ToolLimits"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Audit from "./Audit.ts"
import * as CircuitBreaker from "./CircuitBreaker.ts"
import * as Credentials from "./Credentials.ts"
import * as Discovery from "./Discovery.ts"
import * as GatewayConfig from "./GatewayConfig.ts"
import * as Asks from "./internal/asks.ts"
import * as Callers from "./internal/callers.ts"
import * as CatalogIndex from "./internal/catalogIndex.ts"
import * as DiscoveryTools from "./internal/discovery.ts"
import * as Guards from "./internal/guards.ts"
import type * as Items from "./internal/items.ts"
import * as Mirror from "./internal/mirror.ts"
import * as PerCaller from "./internal/perCaller.ts"
import * as ReadCache from "./internal/readCache.ts"
import * as Skills from "./internal/skills.ts"
import * as Subscriptions from "./internal/subscriptions.ts"
import * as Tasks from "./internal/tasks.ts"
import type * as Policy from "./Policy.ts"
import type * as TokenExchange from "./TokenExchange.ts"

/**
 * The gateway: its identity downstream, the upstreams and how the host
 * reaches them (every `McpHost.Options` field but `naming`, which
 * `naming` and `unprefixed` make).
 *
 * Asks: MCP does not say which call a server's request belongs to, so the
 * gateway asks the one downstream session with calls in flight on the
 * asking upstream; when several sessions have, the request is refused (an
 * error to the upstream), never guessed. The asking upstream is the one
 * the host names (`AskingServer`), for a `roots/list` too.
 */
export interface Options extends Omit<McpHost.Options, "clientInfo" | "naming"> {
  /** The gateway as a server: name, version, instructions, limits (`McpServer.Options`). */
  readonly server: McpServer.Options
  /** The gateway as a client of its upstreams. Default: the server's name and version. */
  readonly clientInfo?: Session.Implementation | undefined
  /** Catalog names of tools and prompts (the host's `Naming`; default `server__name` always). */
  readonly naming?: Naming.Options | undefined
  /** An upstream whose tools and prompts keep their own names. */
  readonly unprefixed?: string | undefined
  /** A credential per remote upstream, by name. */
  readonly credentials?: Credentials.ByServer | undefined
  /**
   * The level each upstream is asked to log at (`logging/setLevel` once per connection, or the level of each
   * request on 2026-07-28); each downstream session's own level then filters what reaches it. Default "info".
   */
  readonly logLevel?: Logging.LoggingLevel | undefined
  /**
   * How long, from the start, the gateway's answers wait for every upstream's
   * first connection (made or failed), so that a client's `initialize`
   * declares, and its first `tools/list` lists, what the upstreams offer. The
   * gateway serves meanwhile (its listener is up, an end of its stdio input
   * closes it); `initialize`, `server/discover` and every request but `ping`
   * are answered once the upstreams have settled or this ends. An upstream
   * connecting later comes with `list_changed`. Default: the start timeout, at
   * most 10 seconds (the clients' handshake deadlines run meanwhile); 0 waits for none.
   */
  readonly awaitUpstreams?: Duration.Input | undefined
  /**
   * Which items each principal sees: an item the policy hides from a
   * principal is neither listed to it nor callable by it (see `Policy`).
   * Default: everyone sees everything.
   */
  readonly policy?: Policy.Policy | undefined
  /** Rate and concurrency limits of tool calls per principal and per tool (`ToolLimits`). Default: none. */
  readonly limits?: ToolLimits.Options | undefined
  /**
   * A circuit breaker per upstream (`CircuitBreaker`): its options, or one
   * made with `CircuitBreaker.make` (to read its `state`, for a health
   * endpoint). Default: none.
   */
  readonly circuitBreaker?: CircuitBreaker.Options | CircuitBreaker.CircuitBreaker | undefined
  /** One audit record per routed request (`Audit`); `true` logs them. Default: none. */
  readonly audit?: Audit.Options | true | undefined
  /**
   * Keeps upstream `resources/read` results as their 2026-07-28 cache hints
   * allow (`ttlMs`; `cacheScope: "public"` shared by all callers, `"private"`
   * per principal), up to `maxEntries` (default 1000). Default: off. With it
   * or without, a read's answer carries the upstream's hints, never a longer `ttlMs` (docs/gateway.md).
   */
  readonly cache?: { readonly maxEntries?: number | undefined } | true | undefined
  /**
   * Discovery mode, for catalogs too large to list: `tools/list` offers
   * `search_tools`, `get_tool_details` and `call_tool` instead of the
   * upstreams' tools, with the policy, limits, breaker and audit applied to
   * the tool called as to a direct call (see `Discovery`). Default: off.
   */
  readonly discovery?: Discovery.Options | true | undefined
  /**
   * Upstreams that act for the gateway's caller, by name: each caller's calls reach such an upstream on a
   * connection of their own, with a token exchanged (RFC 8693) for the caller's at the upstream's
   * authorization server (see `TokenExchange`; the downstream verifier must be wrapped by
   * `TokenExchange.keepingTokens`). The shared connection, with the upstream's `credentials`, lists its
   * catalog. Default: none.
   */
  readonly tokenExchange?: { readonly [upstream: string]: TokenExchange.Options } | undefined
  /**
   * The most resources one downstream session may be subscribed to at once (`resources/subscribe` of distinct
   * URIs), and the most URIs one 2026-07-28 `subscriptions/listen` may name. Each costs the gateway a follower of
   * the upstream's updates and the server's record of it: unbounded, one session could grow the gateway without
   * end. One past it is refused with -32029 (`data: { maxSubscriptions }`), asking nothing upstream. Default
   * `server.maxSubscriptions`, else 1000; the gateway's server is given the same bound.
   */
  readonly maxSubscriptions?: number | undefined
  /**
   * The longest wait between two attempts to reach an upstream that is down, under the gateway's default
   * `reconnect` (`reconnecting`). Default 30 seconds. A `reconnect` schedule given wins over it.
   */
  readonly reconnectCap?: Duration.Input | undefined
}

/**
 * The gateway's default reconnect schedule: the host's `backoff` (500 ms doubling up to `cap`, default 30 s)
 * with no limit on its attempts. A gateway is a long-running service: an upstream down for an hour is tried
 * again every `cap` and served again once it is back, where the host's own default gives up after 10 retries
 * and leaves the upstream `Failed` until a `restart` nobody calls.
 */
export const reconnecting = (cap?: Duration.Input | undefined): Schedule.Schedule<Duration.Duration> =>
  McpHost.backoff({ cap, times: Number.POSITIVE_INFINITY })

/**
 * The naming of `options`: the host's, with the `unprefixed` upstream's names
 * kept as they are. The others' prefixes are unique over `upstreams` (every
 * configured upstream, in order), as the host makes them.
 */
export const namingOf = (
  naming: Naming.Options | undefined,
  unprefixed: string | undefined,
  upstreams: ReadonlyArray<string> = []
): Naming.Options | undefined => {
  if (unprefixed === undefined) return naming
  const separator = naming?.separator ?? "__"
  const prefixes = Naming.prefixes(upstreams, separator)
  const format =
    naming?.format ??
    ((server: string, name: string) =>
      `${prefixes.get(server) ?? Naming.prefixOf(server, separator)}${separator}${name}`)
  return { ...naming, format: (server, name) => (server === unprefixed ? name : format(server, name)) }
}

/** Waits (at most `timeout`) until no upstream is still making its first connection. */
const settled = (host: McpHost.McpHostShape, timeout: Duration.Duration) =>
  Effect.forEach(
    host.servers,
    (name) =>
      host.statusChanges.pipe(
        Stream.filter((change) => change.server === name && change.status._tag !== "Connecting"),
        Stream.runHead
      ),
    { concurrency: "unbounded", discard: true }
  ).pipe(Effect.timeoutOption(timeout), Effect.asVoid)

/**
 * The gateway as a server Layer, with the host it is built from; provide a
 * `Connector` (`NodeConnector.layer()` on Node). Closing it closes every
 * downstream session's items and every upstream connection.
 */
export const layer = (
  options: Options
): Layer.Layer<McpServer.McpServer | McpHost.McpHost, never, Connector.Connector> =>
  Layer.unwrap(
    Effect.sync(() => {
      const {
        server,
        clientInfo,
        naming,
        unprefixed,
        credentials,
        awaitUpstreams,
        logLevel,
        policy,
        limits,
        circuitBreaker,
        audit,
        cache,
        discovery,
        tokenExchange,
        reconnectCap,
        maxSubscriptions,
        ...hostOptions
      } = options
      // One registry per gateway: the host's handlers read it, the server's items fill it.
      const callers = Callers.make()
      const upstreamClientInfo = clientInfo ?? { name: server.name, version: server.version }
      const host = McpHost.layer({
        ...hostOptions,
        reconnect: hostOptions.reconnect ?? reconnecting(reconnectCap),
        clientInfo: upstreamClientInfo,
        naming: namingOf(naming, unprefixed, Object.keys(hostOptions.config.mcpServers))
      }).pipe(Layer.provide(Asks.layer(callers)), Layer.provide(Credentials.layer(credentials ?? {})))
      const wait =
        awaitUpstreams === undefined
          ? Duration.min(Duration.fromInputUnsafe(options.startTimeout ?? "30 seconds"), Duration.seconds(10))
          : Duration.fromInputUnsafe(awaitUpstreams)
      // The gateway serves at once (its listener up, its stdio read, so an end of input is seen); what waits for
      // the upstreams' first connections is its answers (McpServer's `ready`), so a client's first `initialize`
      // declares, and its first list lists, every upstream that connected within `wait`.
      const upstreamsSettled = Latch.makeUnsafe(!Duration.isGreaterThan(wait, Duration.zero))
      const mirror = Layer.effectDiscard(
        Effect.gen(function* () {
          const h = yield* McpHost.McpHost
          const s = yield* McpServer.McpServer
          // The items' handlers close over what they route through; their context is the gateway's, minus the
          // loggers (a request installs its own bridge to the client's log).
          const context = Context.omit(Logger.CurrentLoggers)(yield* Effect.context<never>()) as Context.Context<never>
          const perCaller =
            tokenExchange === undefined
              ? undefined
              : yield* PerCaller.make({
                  exchanges: tokenExchange,
                  config: options.config,
                  client: { ...hostOptions.client, clientInfo: upstreamClientInfo },
                  handlers: (upstream) => Asks.layerFor(callers, upstream)
                })
          const sync = yield* Mirror.run({ ...routes, host: h, perCaller }, s, context)
          if (Duration.isGreaterThan(wait, Duration.zero)) {
            // What the followers of the catalog and of the statuses may not have taken yet is taken first.
            yield* settled(h, wait).pipe(
              Effect.andThen(sync),
              Effect.andThen(Subscriptions.supportingNow(h, supporting)),
              Effect.andThen(upstreamsSettled.open),
              Effect.forkScoped
            )
          }
        })
      )
      const routes: Omit<Items.Routes, "host" | "perCaller"> = {
        callers,
        logLevel: logLevel ?? "info",
        leveled: new WeakSet(),
        policy,
        breaker:
          circuitBreaker === undefined
            ? undefined
            : "run" in circuitBreaker
              ? circuitBreaker
              : CircuitBreaker.make(circuitBreaker),
        index: { tool: new Map(), prompt: new Map(), resource: new Map(), template: new Map() },
        skillFiles: new Map(),
        routed: new WeakMap(),
        tasked: new WeakSet(),
        extensionTasks: new Set(),
        readHints: new WeakMap(),
        reads: cache === undefined ? undefined : ReadCache.make(cache === true ? 1000 : (cache.maxEntries ?? 1000)),
        discovery:
          discovery === undefined
            ? undefined
            : { index: CatalogIndex.make([]), pageSize: Discovery.pageSizeOf(discovery) }
      }
      // In discovery mode the limits and the audit see a `call_tool` as the call of the tool it names.
      const direct = discovery === undefined ? (m: Middleware.Middleware) => m : DiscoveryTools.asDirect
      const auditOptions = audit === true ? {} : audit
      // Outside any middleware of the user's (order 0): the audit sees every refusal, the policy every list.
      const guards = Layer.unwrap(
        Effect.gen(function* () {
          const h = yield* McpHost.McpHost
          // Made once per gateway, with its random key when none is configured.
          const auditor = auditOptions === undefined ? undefined : yield* Audit.make(auditOptions)
          return Middleware.layerAt(
            -1,
            ...(auditor === undefined ? [] : [direct(Guards.audit(routes, auditor))]),
            // Discovery's own tools are listed to everyone: what each caller sees is decided within them.
            ...(policy === undefined
              ? []
              : [
                  Guards.visibility(routes, h.catalog, policy, { tools: discovery === undefined }),
                  Skills.visibility(routes, policy)
                ]),
            ...(limits === undefined ? [] : [direct(ToolLimits.middleware(limits))]),
            Guards.cacheHints(routes, h.catalog, server.cache?.read, policy !== undefined),
            Tasks.guard(routes)
          )
        })
      )
      // Upstream subscriptions, inside the guards: a subscription the policy hides is refused before it is made.
      const supporting = new Set<string>()
      // One bound for the gateway's check (before anything is asked upstream) and its server's own, which would
      // otherwise refuse at its default a subscription the gateway had already made upstream.
      const subscriptionBound = maxSubscriptions ?? server.maxSubscriptions ?? Subscriptions.defaultMaxSubscriptions
      const subscriptions = Layer.unwrap(
        Effect.gen(function* () {
          const h = yield* McpHost.McpHost
          const s = yield* McpServer.McpServer
          return Middleware.layerAt(
            -1,
            yield* Subscriptions.make({ ...routes, host: h, perCaller: undefined }, s, supporting, subscriptionBound)
          )
        })
      )
      // Under a policy, an update of a resource is told only to the subscribers whose principal may see it (the server
      // asks of each one, sessions and listen streams alike) and the server's own option lets through.
      const updateVisible = (h: McpHost.McpHostShape): McpServer.Options["resourceUpdateVisible"] => {
        if (policy === undefined) return server.resourceUpdateVisible
        const visible = Subscriptions.updateVisible(h.catalog, policy)
        const own = server.resourceUpdateVisible
        return own === undefined
          ? visible
          : (uri, principal) =>
              Effect.flatMap(visible(uri, principal), (seen) => (seen ? own(uri, principal) : Effect.succeed(false)))
      }
      return Layer.mergeAll(mirror, guards, subscriptions).pipe(
        Layer.provideMerge(
          Layer.unwrap(
            Effect.map(McpHost.McpHost, (h) =>
              McpServer.layer({
                ...server,
                // Upstreams come later than the first client may: what they offer is declared from the start.
                declare: server.declare ?? ["tools", "resources", "prompts"],
                // Declared while an upstream's connection supports subscriptions.
                resourceSubscriptions: server.resourceSubscriptions ?? (() => supporting.size > 0),
                resourceUpdateVisible: updateVisible(h),
                maxSubscriptions: subscriptionBound,
                ready:
                  server.ready === undefined
                    ? upstreamsSettled.await
                    : Effect.andThen(upstreamsSettled.await, server.ready)
              })
            )
          )
        ),
        Layer.provideMerge(host)
      )
    })
  )

/** The gateway from a configuration file (see `GatewayConfig`); the file's `gateway` section wins over `options`. */
export const layerConfigFile = (
  path: string,
  options: Omit<Options, "config">
): Layer.Layer<
  McpServer.McpServer | McpHost.McpHost,
  McpConfig.ConfigError,
  Connector.Connector | FileSystem.FileSystem
> =>
  Layer.unwrap(
    Effect.map(GatewayConfig.load(path), (file) =>
      layer({
        ...options,
        config: file.config,
        naming: file.naming ?? options.naming,
        unprefixed: file.unprefixed ?? options.unprefixed,
        credentials: { ...options.credentials, ...file.credentials },
        discovery: file.discovery ?? options.discovery,
        startTimeout: file.startTimeout ?? options.startTimeout,
        awaitUpstreams: file.awaitUpstreams ?? options.awaitUpstreams,
        reconnectCap: file.reconnectCap ?? options.reconnectCap
      })
    )
  )
