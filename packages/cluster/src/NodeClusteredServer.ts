/**
 * An McpServer served as one runner of a cluster on Node: the clustered
 * Streamable HTTP endpoint on `host:port`, the runner reachable by the other
 * runners on `runnerHost:runnerPort` (effect/cluster's socket transport), and
 * the cluster's tables, the durable session state and the SSE events in one
 * SQL database named by a URL (`sqlite:<file>` or `postgres://...`).
 *
 * Every process of the cluster runs this with the same database and its own
 * runner address; put any load balancer in front of the HTTP ports, without
 * sticky sessions.
 *
 * @example
 * ```ts
 * import * as NodeClusteredServer from "@effect-mcp/cluster/NodeClusteredServer"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 *
 * const Server = McpServer.layer({ name: "clustered", version: "1.0.0" })
 * export const Runner = NodeClusteredServer.layer(Server, {
 *   storage: "sqlite:/var/lib/mcp/cluster.db",
 *   port: 3000,
 *   runnerPort: 34431
 * })
 * ```
 */
import type * as HttpServeOptions from "@effect-mcp/http/HttpServeOptions"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import type * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as SqlEventStore from "@effect-mcp/sql/SqlEventStore"
import * as SqlTaskStore from "@effect-mcp/sql/SqlTaskStore"
import * as NodeClusterHttp from "@effect/platform-node/NodeClusterHttp"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import type * as Duration from "effect/Duration"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as Option from "effect/Option"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServer from "effect/http/HttpServer"
import { randomBytes } from "node:crypto"
import * as ChangeFeed from "./ChangeFeed.ts"
import * as ClusteredHttpServer from "./ClusteredHttpServer.ts"
import type * as DirectHop from "./DirectHop.ts"
import * as HopServer from "./internal/hopServer.ts"
import * as NodeHop from "./internal/nodeHop.ts"
import * as NodeRelay from "./internal/nodeRelay.ts"
import * as SessionState from "./SessionState.ts"

/** Where a runner listens and where the cluster keeps its state. */
export interface Options extends HttpServeOptions.HostChecks {
  /** The cluster's database: `sqlite:<file>` (every runner on this machine) or `postgres://...`. */
  readonly storage: string
  /** Interface of the MCP endpoint. Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Port of the MCP endpoint; 0 picks a free one. Default 0. */
  readonly port?: number | undefined
  /** Path of the MCP endpoint. Default `/mcp`. */
  readonly path?: `/${string}` | undefined
  /** The host other runners reach this one at. Default `127.0.0.1`. */
  readonly runnerHost?: string | undefined
  /** The port other runners reach this one at (a fixed port: it is the runner's identity). */
  readonly runnerPort: number
  /** How POSTs carrying requests are answered. Default `"sse"`. */
  readonly responseMode?: "sse" | "json" | undefined
  /** Sessions this runner holds at once. Default 10,000. */
  readonly maxSessions?: number | undefined
  /** Sessions one client may hold on this runner. Default 1,000. */
  readonly maxSessionsPerClient?: number | undefined
  /** A session idle this long is closed (and its state forgotten). Default 30 minutes. */
  readonly sessionIdleTimeout?: Duration.Input | undefined
  /** How long SSE events stay resumable with `Last-Event-ID`. Default 1 hour. */
  readonly eventRetention?: Duration.Input | undefined
  /**
   * effect/cluster settings (shard count, lock expiration, health checks...):
   * `shardsPerGroup` must be the same on every runner. Default: effect's.
   */
  readonly sharding?: Partial<ShardingConfig.ShardingConfig["Service"]> | undefined
  /**
   * Makes every runner an OAuth 2.1 protected resource (as `NodeMcpServer`'s
   * `auth`): a session is bound to the principal that opened it on every
   * runner, also once reopened elsewhere. Default: none.
   */
  readonly auth?: NodeMcpServer.HttpAuth | ((endpointUrl: string) => NodeMcpServer.HttpAuth) | undefined
  /**
   * How long a request for a session whose runner was lost waits for the
   * session's shard to move before it is answered with an error saying it
   * did not run (see `ClusteredHttpServer.Options`). Default 60 seconds.
   */
  readonly locateTimeout?: Duration.Input | undefined
  /** How list changes, resource updates and task statuses reach the other processes (see `ChangeFeed`). */
  readonly changes?: ChangeFeed.Options | undefined
  /**
   * The tasks table in the cluster's database (`SqlTaskStore`): every runner
   * reads every task, so a session's tasks answer wherever the session moves,
   * and a task whose runner was lost reads `failed`. A `TaskStore` the server
   * Layer already has is used instead. Default: `SqlTaskStore`'s.
   */
  readonly tasks?: SqlTaskStore.Options | undefined
}

/**
 * On SQLite in WAL mode, commits wait for the disk only at checkpoints
 * (`synchronous = NORMAL`): the database stays consistent after a crash, and
 * each SSE event stored costs no flush of its own.
 */
const relaxedSync = (context: Context.Context<SqlClient.SqlClient>) => {
  const sql = Context.get(context, SqlClient.SqlClient)
  return sql.onDialectOrElse({
    sqlite: () => Effect.ignore(sql.unsafe("PRAGMA synchronous = NORMAL")),
    orElse: () => Effect.void
  })
}

/** The largest request body the endpoint reads (the Streamable HTTP server's default). */
const MAX_BODY_BYTES = 4 * 1024 * 1024

const isLoopback = (host: string) =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)

const isWildcard = (host: string) => host === "0.0.0.0" || host === "::" || host === "[::]" || host === ""

/**
 * This runner's direct hop (closed with the scope): its listener on the
 * endpoint's interface (any free port), which other runners reach at the
 * endpoint's address, or at `runnerHost` when it listens on a wildcard
 * address; and its client to the other runners' listeners.
 */
const hopOf = (options: Options) =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    const runnerHost = options.runnerHost ?? "127.0.0.1"
    const reached = isWildcard(host) ? runnerHost : host
    // Runners on other machines cannot reach a loopback endpoint: only runners on this machine can forward here.
    if (isLoopback(host) && !isLoopback(runnerHost)) {
      yield* Effect.logWarning(
        `the MCP endpoint listens on ${host}: runners on other machines cannot forward requests to it; ` +
          `listen on ${runnerHost} or a wildcard address`
      )
    }
    const name = reached.includes(":") && !reached.startsWith("[") ? `[${reached}]` : reached
    const secret = randomBytes(24).toString("base64url")
    // Beside the endpoint, on its interface: other runners reach it where they reach the endpoint.
    const listener = yield* Effect.acquireRelease(HopServer.listen(host, secret), (listener) =>
      Effect.sync(listener.close)
    )
    const self: DirectHop.Target = { origin: `tcp://${name}:${listener.port}`, secret }
    const hop = yield* Effect.acquireRelease(
      Effect.sync(() => NodeHop.make(self)),
      (hop) => Effect.sync(hop.close)
    )
    return { hop, listener }
  })

/** The scopes a request needs: those of the items it names, and those the protection adds. */
const scopesOf = (
  server: McpServer.McpServerShape,
  protection: NodeMcpServer.HttpAuth
): HttpAuthentication.RequiredScopes => {
  const ofItems = McpServer.requiredScopesOf(server)
  const extra = protection.requiredScopes
  if (extra === undefined) return ofItems
  return (method, target) => {
    const scopes = [...(ofItems(method, target) ?? []), ...(extra(method, target) ?? [])]
    return scopes.length === 0 ? undefined : [...new Set(scopes)]
  }
}

/**
 * The server as a runner of the cluster, listening until the Layer is
 * released; it provides the `HttpServer` (read the address with `NodeHttpServer.url`).
 */
export const layer = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options: Options
): Layer.Layer<HttpServer.HttpServer, unknown, Exclude<R, never>> => {
  const database = SqlDatabase.layer(options.storage).pipe(Layer.tap((context) => relaxedSync(context)))
  const runnerAddress = RunnerAddress.make(options.runnerHost ?? "127.0.0.1", options.runnerPort)
  // WebSocket between runners: its sockets send small frames at once (no Nagle delay), which
  // a reply streamed event by event needs.
  const sharding = NodeClusterHttp.layer({
    transport: "websocket",
    storage: "sql",
    shardingConfig: { ...options.sharding, runnerAddress: Option.some(runnerAddress) }
  })
  const events = SqlEventStore.layer({ maxAge: options.eventRetention })
  const path = options.path ?? "/mcp"
  const routes = Layer.unwrap(
    Effect.gen(function* () {
      const auth = options.auth
      const bound = yield* NodeHttpServer.url
      // A protection made from the endpoint's URL waits for the bind (port 0 is known then).
      const protection = auth === undefined ? undefined : typeof auth === "function" ? auth(`${bound}${path}`) : auth
      const { hop, listener } = yield* hopOf(options)
      const relay = NodeRelay.make(hop, { path, maxBodyBytes: MAX_BODY_BYTES })
      const requiredScopes = protection === undefined ? undefined : scopesOf(yield* McpServer.McpServer, protection)
      const endpoint = Layer.effectDiscard(
        Effect.gen(function* () {
          const server = yield* ClusteredHttpServer.make({
            session: McpServer.makeSession,
            path,
            responseMode: options.responseMode,
            allowedHosts: options.allowedHosts,
            allowedOrigins: options.allowedOrigins,
            dnsRebindingProtection: options.dnsRebindingProtection,
            maxSessions: options.maxSessions,
            maxSessionsPerClient: options.maxSessionsPerClient,
            sessionIdleTimeout: options.sessionIdleTimeout,
            maxBodyBytes: MAX_BODY_BYTES,
            hop,
            locateTimeout: options.locateTimeout,
            attemptOf: relay.attemptOf,
            authentication: protection?.authentication,
            requiredScopes
          })
          yield* (yield* HttpRouter.HttpRouter).add("*", path, server.handler)
          // Hops from other runners, served without an HTTP server around them.
          const context = yield* Effect.context<never>()
          listener.serve({
            handler: (request) =>
              Effect.provideService(server.hopHandler, HttpServerRequest.HttpServerRequest, request),
            runFork: Effect.runForkWith(context)
          })
          // Calls to sessions another runner owns skip effect's HTTP server on this one (internal/nodeRelay.ts).
          yield* (yield* NodeHttpServer.RequestFilters).add(relay.filter(server))
        })
      )
      return protection?.routes === undefined ? endpoint : Layer.merge(endpoint, protection.routes)
    })
  )
  return Layer.merge(
    NodeHttpServer.layer(routes, { host: options.host, port: options.port }),
    ChangeFeed.layer(options.changes)
  ).pipe(
    Layer.provide(Layer.mergeAll(sharding, SessionState.layerSql(), events)),
    Layer.provide(Layer.provide(server, SqlTaskStore.layer(options.tasks))),
    Layer.provide(database)
  ) as Layer.Layer<HttpServer.HttpServer, unknown, Exclude<R, never>>
}
