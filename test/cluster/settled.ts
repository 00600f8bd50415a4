/**
 * Waiting for a cluster of test runners to settle: runners started one after
 * another move shards between them for a while (each assignment refresh, then
 * a lock taken on the next lock refresh), many seconds on a loaded machine,
 * and a request for a session whose shard is on the move waits for it. A test
 * whose first steps must not wait (the SDK client never retries a first GET
 * that failed to open) waits for `settled` after `startRunners`.
 */
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

/** effect/cluster's default: every shard of the one group is held once the cluster has settled. */
const SHARDS = 300

/**
 * Which runner holds each shard now, as sorted `shard=holder` pairs: the locks
 * table on SQLite, the advisory locks of this database (one session per
 * runner) on PostgreSQL.
 */
const holders = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql.onDialectOrElse({
    pg: () =>
      sql<{ readonly shard: string; readonly holder: string }>`SELECT objid::text AS shard, pid::text AS holder
        FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    orElse: () =>
      sql<{
        readonly shard: string
        readonly holder: string
      }>`SELECT shard_id AS shard, address AS holder FROM cluster_locks`
  })
  return rows.map((row) => `${row.shard}=${row.holder}`).sort()
})

/** How many runners hold the shards of a snapshot. */
const holderCount = (pairs: ReadonlyArray<string>) =>
  new Set(pairs.map((pair) => pair.slice(pair.indexOf("=") + 1))).size

/**
 * Waits until the runners on `storage` have settled: every shard held, by
 * all `runners`, and no shard changing hands over four reads 500 ms apart
 * (a few assignment refreshes of test/cluster/support.ts's timings).
 */
export const settled = (storage: string, runners = 3) =>
  SqlDatabase.use(
    storage,
    Effect.gen(function* () {
      let last = ""
      let stable = 0
      let seen: ReadonlyArray<string> = []
      const deadline = Date.now() + 90_000
      while (stable < 4) {
        if (Date.now() > deadline) {
          const by = holderCount(seen)
          return yield* Effect.die(new Error(`the cluster never settled: ${seen.length} shards held by ${by}`))
        }
        yield* Effect.sleep("500 millis")
        seen = yield* holders
        const snapshot = seen.join(",")
        stable = seen.length === SHARDS && holderCount(seen) === runners && snapshot === last ? stable + 1 : 0
        last = snapshot
      }
    })
  )
