/**
 * Waiting for a cluster of test runners to settle: runners started one after
 * another move shards between them for a while (each assignment refresh, then
 * a lock taken on the next lock refresh), and a request for a session whose
 * shard is on the move waits for it. `startRunners` waits for `settled` before
 * it returns, so a test starts on a cluster whose shards no longer move.
 *
 * Settled means: every shard is locked by the runner effect/cluster assigns it
 * to once it knows all the runners (its consistent-hash ring over their
 * addresses, computed here the way `Sharding` does). That state is final: no
 * runner gives up a shard it is assigned, and none can take a shard another
 * holds. So the wait ends on the first read that shows it, with no settling
 * period.
 */
import * as SqlDatabase from "@effect-mcp/sql/SqlDatabase"
import * as Effect from "effect/Effect"
import * as HashRing from "effect/HashRing"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as Schedule from "effect/Schedule"
import * as SqlClient from "effect/sql/SqlClient"

/** effect/cluster's defaults, which the runners of the tests keep: one group, its shards, weight 1. */
const SHARDS = 300
/** SqlRunnerStorage's PostgreSQL advisory-lock number of shard n of the first group: 1,000,000 + n. */
const PG_LOCK_BASE = 1_000_000

/**
 * Which runner holds each shard now, as `[shard, holder]` pairs: the locks
 * table on SQLite (the holder is the runner's address), the advisory locks of
 * this database on PostgreSQL (the holder is the runner's lock session).
 */
const holders = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.onDialectOrElse({
    pg: () =>
      Effect.map(
        sql<{ readonly shard: string; readonly holder: string }>`SELECT objid::text AS shard, pid::text AS holder
          FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND objid BETWEEN ${PG_LOCK_BASE + 1} AND ${PG_LOCK_BASE + SHARDS}
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        (rows) => rows.map((row) => [Number(row.shard) - PG_LOCK_BASE, row.holder] as const)
      ),
    orElse: () =>
      Effect.map(
        sql<{ readonly shard: string; readonly holder: string }>`SELECT shard_id AS shard, address AS holder
          FROM cluster_locks WHERE shard_id LIKE 'default:%'`,
        (rows) => rows.map((row) => [Number(row.shard.slice("default:".length)), row.holder] as const)
      )
  })
})

/** The shards of each holder, as a set of `1,5,17...` strings: the partition of the shards among holders. */
const partition = (pairs: ReadonlyArray<readonly [number, string]>): Array<string> => {
  const byHolder = new Map<string, Array<number>>()
  for (const [shard, holder] of pairs) byHolder.set(holder, [...(byHolder.get(holder) ?? []), shard])
  return [...byHolder.values()].map((shards) => shards.sort((a, b) => a - b).join(",")).sort()
}

/** The partition effect/cluster's Sharding computes for runners on 127.0.0.1 at `runnerPorts`. */
const assigned = (runnerPorts: ReadonlyArray<number>): Array<string> => {
  const ring = HashRing.make<RunnerAddress.RunnerAddress>()
  for (const port of runnerPorts) HashRing.add(ring, RunnerAddress.make("127.0.0.1", port), { weight: 1 })
  const owners = HashRing.getShards(ring, SHARDS) ?? []
  return partition(owners.map((owner, i) => [i + 1, owner.toString()] as const))
}

/**
 * Waits until the runners on `storage` listening for runner traffic on
 * `runnerPorts` hold exactly the shards effect/cluster assigns them. The locks
 * are read again every 100 ms: nothing tells an outside observer that a lock
 * was taken, so a read is the event; the 90 s bound only fires on breakage.
 */
export const settled = (storage: string, runnerPorts: ReadonlyArray<number>) => {
  const expected = assigned(runnerPorts).join(" ")
  return SqlDatabase.use(
    storage,
    Effect.gen(function* () {
      let seen: ReadonlyArray<readonly [number, string]> = []
      const read = Effect.tap(holders, (pairs) =>
        Effect.sync(() => {
          seen = pairs
        })
      )
      yield* read.pipe(
        Effect.repeat({
          until: (pairs) => partition(pairs).join(" ") === expected,
          schedule: Schedule.spaced("100 millis")
        }),
        Effect.timeoutOption("90 seconds"),
        Effect.flatMap((done) =>
          done._tag === "Some"
            ? Effect.void
            : Effect.die(
                new Error(
                  `the cluster never settled: ${seen.length} shards held by ${partition(seen).length} of ${runnerPorts.length} runners`
                )
              )
        )
      )
    })
  )
}
