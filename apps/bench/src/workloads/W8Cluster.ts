/**
 * W8, clustered Streamable HTTP (issue 17): the same echo calls through a
 * round-robin forwarder on loopback, to one effect-mcp process, then to three
 * processes of one cluster (NodeClusteredServer, SQLite), in the same run. In
 * the cluster two calls in three reach a process that does not own the
 * session and are forwarded to its owner (by the direct hop to the
 * owner's hop listener); the difference of the
 * p50s is the per-call routing cost. The same cluster behind a sticky
 * forwarder (session affinity: each session's requests go to the process
 * that opened it, which owns it) shows what the cluster costs when nothing
 * is forwarded. The one process behind two bare node:http relay processes
 * (the forwarder round robin over it and them) has the cluster's topology
 * with nothing of effect-mcp on the extra hop: what one more process on two
 * calls in three costs by itself. Then the same calls from 16 sessions at
 * once, each sequential: the sessions spread over the runners (each opened
 * where it arrived), as a cluster's load does. JSON replies; the effect-mcp
 * client on 2025-11-25 sessions.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Forwarder from "../Forwarder.ts"
import * as Http from "../Http.ts"
import type { Measurement, Metric, Series, Table } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"
import { echoRound, latencyMetrics, project, serverCpuMetric } from "./common.ts"

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!
}

/**
 * `sessions` sessions at once, each making its share of `count` calls one
 * after another: what a cluster is for, spreading sessions over processes.
 * Calls per second over all sessions.
 */
const manySessions = async (url: string, sessions: number, count: number, text: string): Promise<Measurement> => {
  const pairs = await Promise.all(Array.from({ length: sessions }, () => Http.effectClient(url)))
  try {
    for (const pair of pairs) if ((await pair.call(text)) !== text) throw new Error("echo returned something else")
    const each = Math.ceil(count / sessions)
    const start = performance.now()
    const runs = await Promise.all(pairs.map((pair) => pair.sequential(each, text)))
    const elapsed = performance.now() - start
    const p50s = runs.map((run) => run.p50 * 1000)
    return { sessionsRate: (each * sessions * 1000) / elapsed, sessionsP50: median(p50s) }
  } finally {
    await Promise.all(pairs.map((pair) => pair.close()))
  }
}

interface ClusterCandidate extends Candidate {
  readonly forwarder: () => Forwarder.Forwarder
  /** The server processes behind the forwarder: their CPU is summed. */
  readonly servers: () => ReadonlyArray<Http.Server>
}

/** The CPU time (µs) the server processes used so far, summed. */
const cpuOf = async (servers: ReadonlyArray<Http.Server>): Promise<number> => {
  let total = 0
  for (const server of servers) total += await server.cpu()
  return total
}

export const workload: Workload = {
  id: "W8",
  title: "Clustered Streamable HTTP",
  run: async (settings) => {
    const count = byMode(settings, { full: 5_000, quick: 200, smoke: 20 })
    const inFlight = 32
    const sessions = 16
    const text = "hello"
    const dir = mkdtempSync(join(tmpdir(), "bench-cluster-"))
    const servers: Array<Http.Server> = []
    const forwarders: Array<Forwarder.Forwarder> = []
    try {
      const single = await Http.spawnServer("effect", "json")
      servers.push(single)
      // Runners start one after another: each creates the cluster's tables in turn.
      const storage = `sqlite:${join(dir, "cluster.db")}`
      for (let i = 0; i < 3; i++) servers.push(await Http.spawnClusterRunner("json", storage, await freePort()))
      // Shards settle on the three runners before anything is measured.
      await new Promise((done) => setTimeout(done, 5_000))
      const one = await Forwarder.start([single.url])
      const three = await Forwarder.start(servers.slice(1).map((server) => server.url))
      const pinned = await Forwarder.start(
        servers.slice(1).map((server) => server.url),
        { sticky: true }
      )
      forwarders.push(one, three, pinned)
      const runners = servers.slice(1)
      // The one process behind the same topology as the cluster: two calls in three through one more process.
      const relays = [await Http.spawnRelay(single.url), await Http.spawnRelay(single.url)]
      servers.push(...relays)
      const relayed = await Forwarder.start([single.url, ...relays.map((relay) => relay.url)])
      forwarders.push(relayed)
      const candidates: ReadonlyArray<ClusterCandidate> = [
        {
          id: "single",
          label: "effect-mcp one process (forwarder)",
          forwarder: () => one,
          servers: () => [single]
        },
        {
          id: "cluster",
          label: "effect-mcp 3-process cluster (round-robin forwarder)",
          forwarder: () => three,
          servers: () => runners
        },
        {
          id: "sticky",
          label: "effect-mcp 3-process cluster (sticky forwarder)",
          forwarder: () => pinned,
          servers: () => runners
        },
        {
          id: "relayed",
          label: "effect-mcp one process, two calls in three through a bare node:http relay process",
          forwarder: () => relayed,
          servers: () => [single, ...relays]
        }
      ]
      const series: Array<Series> = await rounds(
        settings,
        candidates,
        async (candidate) => ({
          ...(await echoRound(
            candidate.label,
            () => Http.effectClient(candidate.forwarder().url),
            count,
            inFlight,
            text,
            () => cpuOf(candidate.servers())
          )),
          ...(await manySessions(candidate.forwarder().url, sessions, count, text))
        }),
        async (candidate) => {
          const pair = await Http.effectClient(candidate.forwarder().url)
          await pair.sequential(Math.min(count, 300), text)
          await pair.close()
        }
      )
      const p50 = (id: string) =>
        median(series.find((s) => s.id === id)?.rounds.map((m) => m.seqP50 ?? Number.NaN) ?? [])
      const routing = p50("cluster") - p50("single")
      settings.log(`  W8 routing cost per call (p50 cluster - p50 one process): ${routing.toFixed(0)} µs`)
      const cpu = (id: string) =>
        median(series.find((s) => s.id === id)?.rounds.map((m) => m.seqServerCpu ?? Number.NaN) ?? [])
      const routingCpu = cpu("cluster") - cpu("single")
      settings.log(`  W8 routing CPU per call (servers' CPU, cluster - one process): ${routingCpu.toFixed(0)} µs`)
      const notes = [
        "Both through the same round-robin forwarder on 127.0.0.1; servers in child processes; JSON replies.",
        "In the cluster a call reaching a process that does not own its session takes the direct hop to the owner (frames on a connection kept open to its hop listener).",
        "The sticky forwarder sends a session's requests to the process that opened it, its owner: no call is forwarded.",
        "The bare relays: two node:http relay processes in front of the one process, the round-robin forwarder over it and them, so two calls in three cross one more process as in the cluster, with nothing of effect-mcp on that hop (the cost of the extra process alone).",
        `Per-call routing cost (median sequential p50, cluster minus one process): ${routing.toFixed(0)} µs.`,
        `Per-call routing CPU (median sequential server CPU, cluster minus one process): ${routingCpu.toFixed(0)} µs.`,
        "Server CPU: user + system time of the server processes (all three runners in the cluster) over the run, per call (a ratio above 1 is more CPU).",
        "latencies in microseconds."
      ]
      const ratios = (metrics: ReadonlyArray<string>) => [
        { label: "cluster / one process", numerator: "cluster", denominator: "single", metrics },
        {
          label: "one process through bare relays / one process",
          numerator: "relayed",
          denominator: "single",
          metrics
        },
        {
          label: "cluster / one process through bare relays",
          numerator: "cluster",
          denominator: "relayed",
          metrics
        },
        {
          label: "cluster behind a sticky forwarder / one process",
          numerator: "sticky",
          denominator: "single",
          metrics
        }
      ]
      const seq: ReadonlyArray<Metric> = [...latencyMetrics("seq"), serverCpuMetric("seq")]
      const conc: ReadonlyArray<Metric> = [...latencyMetrics("conc"), serverCpuMetric("conc")]
      const spread: ReadonlyArray<Metric> = [
        { key: "sessionsRate", label: "calls/s", digits: 0 },
        { key: "sessionsP50", label: "p50 µs (median of the sessions')", digits: 0 }
      ]
      const tables: Array<Table> = [
        {
          id: "W8-sequential",
          title: `W8 clustered Streamable HTTP: ${count.toLocaleString("en-US")} sequential calls`,
          metrics: seq,
          ratios: ratios(["seqRate", "seqServerCpu"]),
          notes,
          series: project(series, seq)
        },
        {
          id: "W8-concurrent",
          title: `W8 clustered Streamable HTTP: ${count.toLocaleString("en-US")} calls, ${inFlight} in flight`,
          metrics: conc,
          ratios: ratios(["concRate", "concServerCpu"]),
          notes,
          series: project(series, conc)
        },
        {
          id: "W8-sessions",
          title: `W8 clustered Streamable HTTP: ${count.toLocaleString("en-US")} calls over ${sessions} sessions at once, each sequential`,
          metrics: spread,
          ratios: ratios(["sessionsRate"]),
          notes: [
            `${sessions} sessions opened through the forwarder, spread over the runners by their ids; each makes its calls one after another.`,
            ...notes
          ],
          series: project(series, spread)
        }
      ]
      return tables
    } finally {
      for (const forwarder of forwarders) await forwarder.close()
      for (const server of servers) await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
