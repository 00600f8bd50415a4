/**
 * `--cluster`: the everything server as one runner of a cluster (see
 * `@effect-mcp/cluster`'s NodeClusteredServer), its state in the database
 * the flag names. Loaded only for `--cluster`.
 */
import * as NodeClusteredServer from "@effect-mcp/cluster/NodeClusteredServer"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import { appendFileSync } from "node:fs"
import type * as Cli from "../Cli.ts"
import * as EverythingServer from "../EverythingServer.ts"

/**
 * Serves the everything server as a runner of the cluster `cli.cluster` names, until interrupted;
 * `auth` (from `--auth`) protects it as it does a single process.
 */
export const serve = (cli: Cli.Http, auth?: NodeClusteredServer.Options["auth"]) =>
  Effect.gen(function* () {
    const base = yield* NodeHttpServer.url
    const cluster = cli.cluster!
    const protectedBy = cli.auth === undefined ? "" : `, tokens from ${cli.auth.issuer}`
    yield* Console.error(
      `mcp-everything-server listening on ${base}/mcp (cluster runner ${cluster.runnerHost}:${cluster.runnerPort}${protectedBy})`
    )
    return yield* Effect.never
  }).pipe(Effect.provide(NodeClusteredServer.layer(serverOf(cli), optionsOf(cli, auth))))

/** The runner's options from the command line (`cli.cluster` set). */
export const optionsOf = (cli: Cli.Http, auth?: NodeClusteredServer.Options["auth"]): NodeClusteredServer.Options => {
  const cluster = cli.cluster!
  return {
    storage: cluster.storage,
    host: cli.host,
    port: cli.port,
    runnerHost: cluster.runnerHost,
    runnerPort: cluster.runnerPort,
    auth,
    responseMode: cli.json ? "json" : "sse",
    allowedHosts: cli.allowedHosts,
    allowedOrigins: cli.allowedOrigins,
    dnsRebindingProtection: cli.dnsRebindingProtection,
    maxSessions: cli.maxSessions,
    maxSessionsPerClient: cli.maxSessionsPerClient,
    sessionIdleTimeout:
      cli.sessionIdleTimeoutSeconds === undefined ? undefined : Duration.seconds(cli.sessionIdleTimeoutSeconds),
    sharding: clusterTimings()
  }
}

/** The everything server, its tasks in the cluster's database: `--task-heartbeat` sets how soon a lost runner's read `failed`. */
const serverOf = (cli: Cli.Http) =>
  callLog().pipe(
    Layer.provideMerge(
      EverythingServer.layer(cli.taskHeartbeatMs === undefined ? {} : { tasks: { heartbeatMs: cli.taskHeartbeatMs } })
    )
  )

/**
 * With `MCP_CLUSTER_CALL_LOG=<file>`, each `tools/call` this runner starts
 * appends `<session id> <request id>` to the file (one short line: runners
 * sharing the file never interleave inside one), so a test can prove that no
 * call ran twice across the runners. Nothing otherwise.
 */
const callLog = (): Layer.Layer<never, never, McpServer.McpServer> => {
  const file = process.env.MCP_CLUSTER_CALL_LOG
  if (file === undefined || file === "") return Layer.empty
  return Middleware.layer((request, next) =>
    request.method !== "tools/call"
      ? next
      : Effect.andThen(
          Effect.flatMap(CurrentRequest.CurrentRequest, (current) =>
            Effect.sync(() => appendFileSync(file, `${request.sessionId} ${String(current.id)}\n`))
          ),
          next
        )
  )
}

/**
 * Shard lock and health timings from the environment (MCP_CLUSTER_LOCK_EXPIRATION_MS...), so
 * a test can make a lost runner's shards move in seconds; effect's defaults otherwise.
 */
const clusterTimings = () => {
  const ms = (name: string) => {
    const value = Number(process.env[name])
    return Number.isFinite(value) && value > 0 ? Duration.millis(value) : undefined
  }
  const timings = {
    shardLockExpiration: ms("MCP_CLUSTER_LOCK_EXPIRATION_MS"),
    shardLockRefreshInterval: ms("MCP_CLUSTER_LOCK_REFRESH_MS"),
    refreshAssignmentsInterval: ms("MCP_CLUSTER_REFRESH_ASSIGNMENTS_MS"),
    runnerHealthCheckInterval: ms("MCP_CLUSTER_HEALTH_CHECK_MS"),
    sendRetryInterval: ms("MCP_CLUSTER_SEND_RETRY_MS")
  }
  return Object.fromEntries(Object.entries(timings).filter(([, value]) => value !== undefined))
}
