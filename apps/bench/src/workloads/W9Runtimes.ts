/**
 * W9, the same server on every JS runtime. First as a Cloudflare Worker on workerd: the echo server bundled as
 * one minified ESM file (raw and gzip size) and its cold start (a workerd process from spawn to the socket
 * listening and to the first `tools/call` answered), effect-mcp's Worker (`WebHandler`, stateless) against the
 * SDK's (its web-standard Streamable HTTP transport, stateless). Then W3's calls on the three server runtimes:
 * the effect-mcp echo server on Node (`NodeMcpServer`), Bun and Deno (`WebHandler` under `Bun.serve` /
 * `Deno.serve`), each in a child process, JSON responses, driven by the same effect-mcp client over a stateful
 * 2025-11-25 session: sequential calls, then 32 in flight.
 */
import * as Http from "../Http.ts"
import * as Runtimes from "../Runtimes.ts"
import type { Metric, Series, Table } from "../Table.ts"
import * as Workers from "../Workers.ts"
import { byMode, type Candidate, rounds, type Settings, type Workload } from "../Workload.ts"
import { echoRound, latencyMetrics, project, serverCpuMetric } from "./common.ts"

interface WorkerCandidate extends Candidate {
  readonly script: string
}

const workers: ReadonlyArray<WorkerCandidate> = [
  { id: "effect", label: "effect-mcp Worker (WebHandler)", script: "workerEffect.ts" },
  { id: "sdk", label: "SDK 1.32.2 Worker (WebStandardStreamableHTTPServerTransport)", script: "workerSdk.ts" }
]

const workerMetrics: ReadonlyArray<Metric> = [
  { key: "rawKiB", label: "bundle KiB", digits: 1 },
  { key: "gzipKiB", label: "gzip KiB", digits: 1 },
  { key: "listenMs", label: "listening ms", digits: 0 },
  { key: "firstCallMs", label: "first call ms", digits: 0 }
]

type RuntimeId = "node" | Runtimes.WebRuntime

const runtimes: ReadonlyArray<Candidate & { readonly id: RuntimeId }> = [
  { id: "node", label: "effect-mcp on Node (NodeMcpServer)" },
  { id: "bun", label: "effect-mcp on Bun 1.4 (WebHandler)" },
  { id: "deno", label: "effect-mcp on Deno 2.9 (WebHandler)" }
]

const spawnOn = (id: RuntimeId): Promise<Http.Server> =>
  id === "node" ? Http.spawnServer("effect", "json") : Runtimes.spawnServer(id)

const runtimeRatios = (metrics: ReadonlyArray<string>) => [
  { label: "Bun / Node", numerator: "bun", denominator: "node", metrics },
  { label: "Deno / Node", numerator: "deno", denominator: "node", metrics }
]

const workersTable = async (settings: Settings): Promise<Table> => {
  const temp = await Workers.tempRoot()
  try {
    const bundles = new Map<string, Workers.Bundle>()
    for (const worker of workers) bundles.set(worker.id, await Workers.bundle(temp.root, worker.script))
    const series = await rounds(settings, workers, async (worker) => {
      const bundle = bundles.get(worker.id)!
      const cold = await Workers.coldStart(bundle)
      return {
        rawKiB: bundle.rawBytes / 1024,
        gzipKiB: bundle.gzipBytes / 1024,
        listenMs: cold.listenMs,
        firstCallMs: cold.firstCallMs
      }
    })
    return {
      id: "W9-workers",
      title: "W9 the echo server as a Cloudflare Worker on workerd: bundle size and cold start",
      metrics: workerMetrics,
      ratios: [
        { label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics: workerMetrics.map((m) => m.key) }
      ],
      notes: [
        "Each Worker bundled by rolldown into one minified ESM file (platform browser); gzip at Node's default level.",
        "Cold start: a workerd process spawned on the bundle, to its socket listening (reported on --control-fd), and to the first tools/call answered (after an initialize), both stateless.",
        "workerd 1.20261117.1, compatibility date 2026-11-01; a new process per measurement."
      ],
      series
    }
  } finally {
    await temp.remove()
  }
}

const runtimeTables = async (settings: Settings): Promise<Array<Table>> => {
  const count = byMode(settings, { full: 5_000, quick: 200, smoke: 20 })
  const inFlight = 32
  const text = "hello"
  const servers = new Map<RuntimeId, Http.Server>()
  try {
    for (const runtime of runtimes) servers.set(runtime.id, await spawnOn(runtime.id))
    const series: Array<Series> = await rounds(
      settings,
      runtimes,
      (runtime) =>
        echoRound(
          runtime.label,
          () => Http.effectClient(servers.get(runtime.id)!.url),
          count,
          inFlight,
          text,
          () => servers.get(runtime.id)!.cpu()
        ),
      async (runtime) => {
        const pair = await Http.effectClient(servers.get(runtime.id)!.url)
        await pair.sequential(Math.min(count, 300), text)
        await pair.concurrent(Math.min(count, 300), inFlight, text)
        await pair.close()
      }
    )
    const notes = [
      "Server in a child process on 127.0.0.1 (Node's from its sources, as W3; Bun's and Deno's from the same sources, their own TypeScript loaders), stateful 2025-11-25 session, JSON responses; the effect-mcp client (Node) in this process.",
      "Server CPU: user + system time of the server process over the run, per call (Node: process.cpuUsage; Bun, Deno: /proc, 10 ms ticks).",
      "latencies in microseconds."
    ]
    const seq: ReadonlyArray<Metric> = [...latencyMetrics("seq"), serverCpuMetric("seq")]
    const conc: ReadonlyArray<Metric> = [...latencyMetrics("conc"), serverCpuMetric("conc")]
    return [
      {
        id: "W9-runtimes-sequential",
        title: `W9 W3 on three runtimes, JSON responses: ${count.toLocaleString("en-US")} sequential calls`,
        metrics: seq,
        ratios: runtimeRatios(["seqRate", "seqServerCpu"]),
        notes,
        series: project(series, seq)
      },
      {
        id: "W9-runtimes-concurrent",
        title: `W9 W3 on three runtimes, JSON responses: ${count.toLocaleString("en-US")} calls, ${inFlight} in flight`,
        metrics: conc,
        ratios: runtimeRatios(["concRate", "concServerCpu"]),
        notes,
        series: project(series, conc)
      }
    ]
  } finally {
    for (const server of servers.values()) await server.close()
  }
}

export const workload: Workload = {
  id: "W9",
  title: "Runtimes: the echo server as a Worker on workerd, and on Node, Bun and Deno",
  run: async (settings) => [await workersTable(settings), ...(await runtimeTables(settings))]
}
