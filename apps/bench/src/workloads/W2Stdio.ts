/**
 * W2, stdio: the client spawns the server (this Node, a `.ts` entry point),
 * then 10,000 sequential `tools/call` of `echo`. Cold start is spawn to
 * initialized (to the first answer for the floor, which has no handshake).
 */
import * as EffectMcp from "../EffectMcp.ts"
import * as Floor from "../Floor.ts"
import type { Pair } from "../Pair.ts"
import * as Sdk from "../Sdk.ts"
import type { Metric } from "../Table.ts"
import { type Candidate, rounds, type Workload } from "../Workload.ts"
import { latencyMetrics, standardRatios } from "./common.ts"

export interface Spawned extends Candidate {
  readonly start: () => Promise<{ readonly pair: Pair; readonly coldStartMs: number }>
}

const effectServer = EffectMcp.serverScript("effectStdio.ts")
const sdkServer = EffectMcp.serverScript("sdkStdio.ts")
const floorServer = EffectMcp.serverScript("floorStdio.ts")

export const candidates: ReadonlyArray<Spawned> = [
  {
    id: "effect",
    label: "effect-mcp",
    start: () => EffectMcp.stdio(effectServer, { supportedVersions: ["2025-11-25"] })
  },
  { id: "sdk", label: "SDK 1.32.2", start: () => Sdk.stdio(sdkServer) },
  { id: "floor", label: "floor", start: () => Floor.stdio(floorServer) },
  { id: "sdk-client", label: "SDK client -> effect-mcp server", start: () => Sdk.stdio(effectServer) },
  { id: "effect-client", label: "effect-mcp client -> SDK server", start: () => EffectMcp.stdio(sdkServer) }
]

const metrics: ReadonlyArray<Metric> = [
  ...latencyMetrics("seq"),
  { key: "coldStart", label: "cold start ms", digits: 0 }
]

export const workload: Workload = {
  id: "W2",
  title: "stdio",
  run: async (settings) => {
    const count = settings.quick ? 300 : 10_000
    const text = "hello"
    const series = await rounds(settings, candidates, async (candidate) => {
      const { pair, coldStartMs } = await candidate.start()
      try {
        if ((await pair.call(text)) !== text) throw new Error(`${candidate.label}: echo returned something else`)
        const sequential = await pair.sequential(count, text)
        return {
          seqRate: sequential.callsPerSecond,
          seqP50: sequential.p50 * 1000,
          seqP99: sequential.p99 * 1000,
          coldStart: coldStartMs
        }
      } finally {
        await pair.close()
      }
    })
    return [
      {
        id: "W2-stdio",
        title: `W2 stdio: ${count.toLocaleString("en-US")} sequential calls, cold start`,
        metrics,
        ratios: standardRatios(["seqRate", "coldStart"]),
        notes: [
          "Servers are `.ts` entry points run by this Node (type stripping), each with Node's compile cache on (filled by the warm-up); cold start is spawn to initialized.",
          "effect-mcp speaks 2025-11-25 to itself here; its client offers every revision to the SDK server (a `server/discover` probe, then `initialize`)."
        ],
        series
      }
    ]
  }
}
