/**
 * W3, Streamable HTTP on loopback: a stateful session (2025-11-25), replies
 * as JSON bodies or as SSE streams; 5,000 sequential calls, then 5,000 with
 * 32 in flight. Servers run in child processes (the machine's second core).
 * The mixed pairs (each half against the SDK's other half) run in JSON mode.
 */
import * as Http from "../Http.ts"
import type { Pair } from "../Pair.ts"
import type { Metric, Series, Table } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"
import { echoRound, latencyMetrics, project, serverCpuMetric, standardRatios } from "./common.ts"

interface HttpCandidate extends Candidate {
  readonly server: Http.Impl
  readonly client: (url: string) => Promise<Pair>
}

const candidates: ReadonlyArray<HttpCandidate> = [
  { id: "effect", label: "effect-mcp", server: "effect", client: Http.effectClient },
  { id: "sdk", label: "SDK 1.32.2", server: "sdk", client: Http.sdkClient },
  { id: "floor", label: "floor", server: "floor", client: Http.floorClient },
  { id: "sdk-client", label: "SDK client -> effect-mcp server", server: "effect", client: Http.sdkClient },
  { id: "effect-client", label: "effect-mcp client -> SDK server", server: "sdk", client: Http.effectClient }
]

export const workload: Workload = {
  id: "W3",
  title: "Streamable HTTP",
  run: async (settings) => {
    const count = byMode(settings, { full: 5_000, quick: 200, smoke: 20 })
    const inFlight = 32
    const text = "hello"
    const tables: Array<Table> = []
    for (const mode of ["json", "sse"] as const) {
      settings.log(` mode ${mode}`)
      const servers = new Map<Http.Impl, Http.Server>()
      try {
        for (const impl of ["effect", "sdk", "floor"] as const) servers.set(impl, await Http.spawnServer(impl, mode))
        // The mixed pairs run in JSON mode only: the halves are compared once, and the run stays short.
        const chosen = mode === "json" ? candidates : candidates.filter((c) => !c.id.includes("-client"))
        const series: Array<Series> = await rounds(
          settings,
          chosen,
          (candidate) =>
            echoRound(
              candidate.label,
              () => candidate.client(servers.get(candidate.server)!.url),
              count,
              inFlight,
              text,
              () => servers.get(candidate.server)!.cpu()
            ),
          async (candidate) => {
            const pair = await candidate.client(servers.get(candidate.server)!.url)
            await pair.sequential(Math.min(count, 300), text)
            await pair.concurrent(Math.min(count, 300), inFlight, text)
            await pair.close()
          }
        )
        const modeLabel = mode === "json" ? "JSON responses" : "SSE responses"
        const notes = [
          "Server in a child process on 127.0.0.1; the floor answers every POST with the JSON echo result (no session, no SSE).",
          "Server CPU: user + system time of the server process over the run, per call (a ratio below 1 is less CPU).",
          "latencies in microseconds."
        ]
        const seq: ReadonlyArray<Metric> = [...latencyMetrics("seq"), serverCpuMetric("seq")]
        const conc: ReadonlyArray<Metric> = [...latencyMetrics("conc"), serverCpuMetric("conc")]
        tables.push(
          {
            id: `W3-${mode}-sequential`,
            title: `W3 Streamable HTTP, ${modeLabel}: ${count.toLocaleString("en-US")} sequential calls`,
            metrics: seq,
            ratios: standardRatios(["seqRate", "seqServerCpu"]),
            notes,
            series: project(series, seq)
          },
          {
            id: `W3-${mode}-concurrent`,
            title: `W3 Streamable HTTP, ${modeLabel}: ${count.toLocaleString("en-US")} calls, ${inFlight} in flight`,
            metrics: conc,
            ratios: standardRatios(["concRate", "concServerCpu"]),
            notes,
            series: project(series, conc)
          }
        )
      } finally {
        for (const server of servers.values()) await server.close()
      }
    }
    return tables
  }
}
