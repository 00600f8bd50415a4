/**
 * W10, a hop in front of a stdio server: what a call costs through the effect-mcp gateway (`effect-mcp gateway`)
 * and through `mcp-proxy` 6.7.19 (the TypeScript proxy that serves a stdio server over Streamable HTTP and SSE),
 * each in front of the same upstream (the effect-mcp echo server over stdio, a child the front spawns), against
 * calling a server directly: the same echo server spawned by the client over stdio, and served over Streamable
 * HTTP by itself (W3's server). The same downstream client for each comparison, the official SDK's (1.32.2, a
 * stateful 2025-11-25 session; over stdio for the direct stdio row), then effect-mcp's for the HTTP rows, so the
 * rows of one client differ only in what serves the call: 5,000 sequential calls, then 5,000 with 32 in flight. Both fronts and the direct HTTP server answer with SSE
 * streams, their default. CPU per call is read from `/proc` for the front (gateway, proxy or the direct HTTP
 * server) and for the stdio upstream behind it.
 */
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as EffectMcp from "../EffectMcp.ts"
import * as Hop from "../Hop.ts"
import * as Http from "../Http.ts"
import type { Pair } from "../Pair.ts"
import * as Sdk from "../Sdk.ts"
import { summarize } from "../Stats.ts"
import type { Measurement, Metric, RatioSpec, Series, Table } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"
import { latencyMetrics, project } from "./common.ts"

/** The stdio echo server every row calls, directly or through a front. */
const upstream = "effectStdio.ts"

type Target = "direct-stdio" | "direct-http" | "gateway" | "mcp-proxy"
type Client = "sdk" | "effect"

interface HopCandidate extends Candidate {
  readonly target: Target
  readonly client: Client
}

const candidates: ReadonlyArray<HopCandidate> = [
  { id: "direct-stdio", label: "echo server over stdio, called directly", target: "direct-stdio", client: "sdk" },
  {
    id: "direct-http",
    label: "echo server over Streamable HTTP, called directly",
    target: "direct-http",
    client: "sdk"
  },
  { id: "gateway", label: "effect-mcp gateway -> echo server over stdio", target: "gateway", client: "sdk" },
  { id: "mcp-proxy", label: "mcp-proxy 6.7.19 -> echo server over stdio", target: "mcp-proxy", client: "sdk" },
  {
    id: "direct-http-effect",
    label: "echo server over Streamable HTTP, called directly (effect-mcp client)",
    target: "direct-http",
    client: "effect"
  },
  {
    id: "gateway-effect",
    label: "effect-mcp gateway -> echo server over stdio (effect-mcp client)",
    target: "gateway",
    client: "effect"
  },
  {
    id: "mcp-proxy-effect",
    label: "mcp-proxy 6.7.19 -> echo server over stdio (effect-mcp client)",
    target: "mcp-proxy",
    client: "effect"
  }
]

/** A connected client and the processes whose CPU the row reads: the front (if any) and the stdio upstream. */
interface Connected {
  readonly pair: Pair
  readonly frontPid: number | undefined
  readonly upstreamPid: number | undefined
}

const cpuMetrics = (prefix: string): ReadonlyArray<Metric> => [
  { key: `${prefix}FrontCpu`, label: "front CPU µs/call", digits: 0 },
  { key: `${prefix}UpstreamCpu`, label: "upstream CPU µs/call", digits: 0 }
]

const cpuOf = (pid: number | undefined): number => (pid === undefined ? Number.NaN : Hop.cpuMicros(pid))

/** One round on a fresh session: the echo checked, then sequential calls, then `inFlight` at once. */
const measure = async (connected: Connected, count: number, inFlight: number, text: string): Promise<Measurement> => {
  const { pair, frontPid, upstreamPid } = connected
  try {
    if ((await pair.call(text)) !== text) throw new Error("echo returned something else")
    const cpu = () => [cpuOf(frontPid), cpuOf(upstreamPid)] as const
    const before = cpu()
    const sequential = await pair.sequential(count, text)
    const between = cpu()
    const concurrent = await pair.concurrent(count, inFlight, text)
    const after = cpu()
    return {
      seqRate: sequential.callsPerSecond,
      seqP50: sequential.p50 * 1000,
      seqP99: sequential.p99 * 1000,
      seqFrontCpu: (between[0] - before[0]) / count,
      seqUpstreamCpu: (between[1] - before[1]) / count,
      concRate: concurrent.callsPerSecond,
      concP50: concurrent.p50 * 1000,
      concP99: concurrent.p99 * 1000,
      concFrontCpu: (after[0] - between[0]) / count,
      concUpstreamCpu: (after[1] - between[1]) / count
    }
  } finally {
    await pair.close()
  }
}

const ratioRows = (metrics: ReadonlyArray<string>): ReadonlyArray<RatioSpec> => [
  { label: "gateway / mcp-proxy", numerator: "gateway", denominator: "mcp-proxy", metrics },
  {
    label: "gateway / mcp-proxy (effect-mcp client)",
    numerator: "gateway-effect",
    denominator: "mcp-proxy-effect",
    metrics
  },
  { label: "gateway / direct HTTP", numerator: "gateway", denominator: "direct-http", metrics },
  { label: "mcp-proxy / direct HTTP", numerator: "mcp-proxy", denominator: "direct-http", metrics },
  {
    label: "gateway / direct HTTP (effect-mcp client)",
    numerator: "gateway-effect",
    denominator: "direct-http-effect",
    metrics
  },
  {
    label: "mcp-proxy / direct HTTP (effect-mcp client)",
    numerator: "mcp-proxy-effect",
    denominator: "direct-http-effect",
    metrics
  }
]

/** W10: the tables `W10-sequential` and `W10-concurrent`. */
export const workload: Workload = {
  id: "W10",
  title: "A hop in front of a stdio server: the effect-mcp gateway and mcp-proxy against direct calls",
  run: async (settings) => {
    const count = byMode(settings, { full: 5_000, quick: 200, smoke: 20 })
    const inFlight = 32
    const text = "hello"
    let direct: Http.Server | undefined
    const fronts = new Map<Target, Hop.Front>()
    try {
      direct = await Http.spawnServer("effect", "sse")
      fronts.set("gateway", await Hop.start("gateway", upstream))
      fronts.set("mcp-proxy", await Hop.start("mcp-proxy", upstream))
      const http = { url: direct.url, pid: direct.pid }
      const connect = async ({ target, client }: HopCandidate): Promise<Connected> => {
        if (target === "direct-stdio") {
          const transport = new StdioClientTransport({
            command: process.execPath,
            args: [EffectMcp.serverScript(upstream)],
            stderr: "inherit"
          })
          const pair = Sdk.clientPair(await Sdk.connect(transport))
          return { pair, frontPid: undefined, upstreamPid: transport.pid ?? undefined }
        }
        const front = target === "direct-http" ? { ...http, upstreamPid: undefined } : fronts.get(target)!
        const pair = await (client === "sdk" ? Http.sdkClient(front.url) : Http.effectClient(front.url))
        return { pair, frontPid: front.pid, upstreamPid: front.upstreamPid }
      }
      const series: Array<Series> = await rounds(
        settings,
        candidates,
        async (candidate) => measure(await connect(candidate), count, inFlight, text),
        async (candidate) => {
          const { pair } = await connect(candidate)
          await pair.sequential(Math.min(count, 300), text)
          await pair.concurrent(Math.min(count, 300), inFlight, text)
          await pair.close()
        }
      )
      const med = (id: string, key: string) =>
        summarize(series.find((s) => s.id === id)?.rounds.map((m) => m[key] ?? Number.NaN) ?? []).median
      const signed = (micros: number) => `${micros >= 0 ? "+" : "-"}${Math.abs(micros).toFixed(0)} µs`
      // What the hop adds to a call, against the same client calling the echo server over HTTP directly.
      const overhead = (prefix: string, id: string, directId: string) =>
        `${signed(med(id, `${prefix}P50`) - med(directId, `${prefix}P50`))} p50, ` +
        `${signed(med(id, `${prefix}FrontCpu`) - med(directId, `${prefix}FrontCpu`))} front CPU`
      const overheadNote = (prefix: string) =>
        `Per-call overhead against the echo server over HTTP directly, same client (median p50, median front CPU): ` +
        `SDK client: gateway ${overhead(prefix, "gateway", "direct-http")}, mcp-proxy ${overhead(prefix, "mcp-proxy", "direct-http")}; ` +
        `effect-mcp client: gateway ${overhead(prefix, "gateway-effect", "direct-http-effect")}, ` +
        `mcp-proxy ${overhead(prefix, "mcp-proxy-effect", "direct-http-effect")}. ` +
        `Against the stdio server called directly (SDK client, p50): gateway ` +
        `${signed(med("gateway", `${prefix}P50`) - med("direct-stdio", `${prefix}P50`))}, mcp-proxy ` +
        `${signed(med("mcp-proxy", `${prefix}P50`) - med("direct-stdio", `${prefix}P50`))}.`
      settings.log(`  W10 sequential: ${overheadNote("seq")}`)
      settings.log(`  W10 ${inFlight} in flight: ${overheadNote("conc")}`)
      const notes = [
        "Fronts and the direct HTTP server in child processes on 127.0.0.1, the client in this process on a fresh stateful 2025-11-25 session per round: the official SDK 1.32.2 client for every row, then the effect-mcp client for the HTTP rows.",
        "The gateway is `effect-mcp gateway --config <file> --port 0 --unprefixed echo` (from the workspace's sources), mcp-proxy is `mcp-proxy --host 127.0.0.1 --port 0 -- node effectStdio.ts` (its other options at their defaults); each spawns the echo server over stdio once and shares it between sessions. Both reply with SSE streams and keep an in-memory event store, as the direct HTTP server does (W3's effect-mcp server in SSE mode).",
        "Front CPU: user + system time of the process the client talks to (gateway, proxy, or the direct HTTP server), every thread, from /proc, per call; upstream CPU: the same for the stdio echo server behind it (the direct stdio row's server is the client's child)."
      ]
      const units = "latencies in microseconds; a ratio below 1 is faster (p50) or less CPU."
      const seq: ReadonlyArray<Metric> = [...latencyMetrics("seq"), ...cpuMetrics("seq")]
      const conc: ReadonlyArray<Metric> = [...latencyMetrics("conc"), ...cpuMetrics("conc")]
      const tables: Array<Table> = [
        {
          id: "W10-sequential",
          title: `W10 a hop in front of a stdio server: ${count.toLocaleString("en-US")} sequential calls`,
          metrics: seq,
          ratios: ratioRows(["seqRate", "seqP50", "seqFrontCpu"]),
          notes: [...notes, overheadNote("seq"), units],
          series: project(series, seq)
        },
        {
          id: "W10-concurrent",
          title: `W10 a hop in front of a stdio server: ${count.toLocaleString("en-US")} calls, ${inFlight} in flight`,
          metrics: conc,
          ratios: ratioRows(["concRate", "concP50", "concFrontCpu"]),
          notes: [...notes, overheadNote("conc"), units],
          series: project(series, conc)
        }
      ]
      return tables
    } finally {
      for (const front of fronts.values()) await front.close()
      await direct?.close()
    }
  }
}
