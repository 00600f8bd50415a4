/**
 * Runners of a cluster inside the test process: the everything server as
 * `NodeClusteredServer` layers on one database, each with its own runner port
 * and HTTP port, as `startRunners` (./support.ts) starts them as processes.
 * For the behaviour that needs no separate process (nothing is killed), this
 * skips the start of a Node process per runner.
 */
import * as NodeClusteredServer from "@effect-mcp/cluster/NodeClusteredServer"
import * as EverythingServer from "@effect-mcp/everything-server/EverythingServer"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Scope from "effect/Scope"
import { settled } from "./settled.ts"
import { freePort, steady } from "./support.ts"

/** One runner in this process. */
export interface InProcessRunner {
  readonly base: string
  readonly url: string
  readonly runnerPort: number
}

/** The shard timings the runner processes of ./support.ts get from the environment (`steady`: none is lost here). */
const sharding = {
  shardLockRefreshInterval: Duration.millis(Number(steady.MCP_CLUSTER_LOCK_REFRESH_MS)),
  refreshAssignmentsInterval: Duration.millis(Number(steady.MCP_CLUSTER_REFRESH_ASSIGNMENTS_MS))
}

/** What `mcp-everything-server --task-heartbeat <ms>` sets. */
export interface Settings {
  readonly taskHeartbeatMs?: number | undefined
}

const start = (
  storage: string,
  settings: Settings,
  scopes: Array<Scope.Closeable>,
  shardGroups?: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    scopes.push(scope)
    const runnerPort = yield* freePort
    const server = EverythingServer.layer(
      settings.taskHeartbeatMs === undefined ? {} : { tasks: { heartbeatMs: settings.taskHeartbeatMs } }
    )
    const clustered = NodeClusteredServer.layer(server, {
      storage,
      port: 0,
      runnerPort,
      sharding: shardGroups === undefined ? sharding : { ...sharding, assignedShardGroups: shardGroups }
    })
    // Quiet as a runner process's stderr is (read only when a test fails): errors still show.
    const context = yield* Layer.buildWithScope(clustered, scope).pipe(
      Effect.provideService(References.MinimumLogLevel, "Error")
    )
    const base = yield* Effect.provideContext(NodeHttpServer.url, context)
    return { base, url: `${base}/mcp`, runnerPort }
  })

/**
 * Starts `count` runners on `storage` for the scope: the first alone (it makes
 * the tables), then the others side by side; returns once the cluster has
 * settled (./settled.ts).
 */
export const startInProcess = (
  count: number,
  storage: string,
  settings: Settings = {}
): Effect.Effect<Array<InProcessRunner>, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    // Each runner in a scope of its own, all closed side by side at the end (each shuts down gracefully).
    const scopes: Array<Scope.Closeable> = []
    yield* Effect.addFinalizer((exit) =>
      Effect.forEach(scopes, (scope) => Scope.close(scope, exit), { concurrency: "unbounded", discard: true })
    )
    const first = yield* start(storage, settings, scopes)
    const others = yield* Effect.all(
      Array.from({ length: count - 1 }, () => start(storage, settings, scopes)),
      { concurrency: "unbounded" }
    )
    const runners = [first, ...others]
    yield* settled(
      storage,
      runners.map((runner) => runner.runnerPort)
    )
    return runners
  })

/**
 * Starts one more runner on `storage` that is assigned no shard group, so it
 * holds no shard: a process that only receives (every session it opens or
 * serves is another runner's). Closed with the scope; the cluster's shards
 * do not move for it.
 */
export const startHoldingNothing = (storage: string): Effect.Effect<InProcessRunner, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const scopes: Array<Scope.Closeable> = []
    yield* Effect.addFinalizer((exit) => Effect.forEach(scopes, (scope) => Scope.close(scope, exit), { discard: true }))
    return yield* start(storage, {}, scopes, [])
  })
