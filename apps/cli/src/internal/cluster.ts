/**
 * `effect-mcp gateway --cluster`: the gateway as one runner of a cluster
 * (`@effect-mcp/cluster`'s NodeClusteredServer), its sessions and SSE events
 * in the database `--cluster` names. Each runner connects to the upstreams on
 * its own: a session is served by the runner that owns it, through that
 * runner's upstream connections. Loaded only for `--cluster`, so a single
 * gateway never loads effect/cluster or SQL.
 */
import * as NodeClusteredServer from "@effect-mcp/cluster/NodeClusteredServer"
import type * as McpServer from "@effect-mcp/server/McpServer"
import type * as Layer from "effect/Layer"

/** Where the runner listens, and where the cluster keeps its state. */
export interface Options {
  /** The cluster's database (`--cluster`): `sqlite:<file>` or `postgres://...`. */
  readonly storage: string
  /** The interface of the MCP endpoint (`--host`). */
  readonly host: string
  /** The port of the MCP endpoint (`--port`; 0 picks a free one). */
  readonly port: number
  /** The host the other runners reach this one at (`--runner-host`). */
  readonly runnerHost: string
  /** The port the other runners reach this one at (`--runner-port`). */
  readonly runnerPort: number
}

/**
 * The gateway `server` as a runner of the cluster, listening while the Layer
 * lives. Shard timings are effect/cluster's, which it reads from the
 * environment too (`SHARD_LOCK_REFRESH_INTERVAL`, `REFRESH_ASSIGNMENTS_INTERVAL`...).
 */
export const layer = <E, R>(server: Layer.Layer<McpServer.McpServer, E, R>, options: Options) =>
  NodeClusteredServer.layer(server, options)
