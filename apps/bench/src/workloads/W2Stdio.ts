/**
 * W2, stdio: the client spawns the server (this Node, a `.ts` entry point),
 * then 10,000 sequential `tools/call` of `echo`. Cold start is spawn to
 * initialized (to the first answer for the floor, which has no handshake),
 * measured twice: from the modules as they are, and from a bundle of each
 * server (see Bundle.ts). A second table times cold starts from the packed and
 * installed packages, echo and everything servers, and a third charges the
 * effect-mcp echo server's start to packages (see W2ColdStart.ts).
 */
import * as Bundle from "../Bundle.ts"
import * as EffectMcp from "../EffectMcp.ts"
import * as Floor from "../Floor.ts"
import * as Hop from "../Hop.ts"
import type { Pair } from "../Pair.ts"
import * as Sdk from "../Sdk.ts"
import type { Metric } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"
import { cpuMetric, latencyMetrics, serverCpuMetric, standardRatios } from "./common.ts"
import * as W2ColdStart from "./W2ColdStart.ts"

interface Started {
  readonly pair: Pair
  readonly coldStartMs: number
}

export interface Spawned extends Candidate {
  readonly start: () => Promise<Started>
  /** The same server from its bundle; only for the three implementations, not the mixed pairs. */
  readonly startBundled?: ((bundles: Bundle.Bundles) => Promise<Started>) | undefined
}

const effectServer = EffectMcp.serverScript("effectStdio.ts")
const sdkServer = EffectMcp.serverScript("sdkStdio.ts")
const floorServer = EffectMcp.serverScript("floorStdio.ts")

export const candidates: ReadonlyArray<Spawned> = [
  {
    id: "effect",
    label: "effect-mcp",
    start: () => EffectMcp.stdio(effectServer, { supportedVersions: ["2025-11-25"] }),
    startBundled: (bundles) => EffectMcp.stdio(bundles.effect, { supportedVersions: ["2025-11-25"] })
  },
  {
    id: "sdk",
    label: "SDK 1.32.2",
    start: () => Sdk.stdio(sdkServer),
    startBundled: (bundles) => Sdk.stdio(bundles.sdk)
  },
  {
    id: "floor",
    label: "floor",
    start: () => Floor.stdio(floorServer),
    startBundled: (bundles) => Floor.stdio(bundles.floor)
  },
  { id: "sdk-client", label: "SDK client -> effect-mcp server", start: () => Sdk.stdio(effectServer) },
  { id: "effect-client", label: "effect-mcp client -> SDK server", start: () => EffectMcp.stdio(sdkServer) },
  // Each half of effect-mcp against the bare peer: which side a call loses to the floor on.
  {
    id: "floor-client",
    label: "floor client -> effect-mcp server",
    start: () => Floor.stdio(effectServer, { handshake: true })
  },
  {
    id: "effect-client-floor",
    label: "effect-mcp client -> floor server",
    start: () => EffectMcp.stdio(floorServer, { supportedVersions: ["2025-11-25"] })
  }
]

/** Each half of effect-mcp facing the bare peer, over the floor pair. */
const floorHalves = [
  {
    label: "effect-mcp server (floor client) / floor",
    numerator: "floor-client",
    denominator: "floor",
    metrics: ["seqRate", "seqServerCpu"]
  },
  {
    label: "effect-mcp client (floor server) / floor",
    numerator: "effect-client-floor",
    denominator: "floor",
    metrics: ["seqRate", "seqCpu"]
  }
]

/**
 * The bare pair over the SDK's. A call's two wake-ups (each side's pipe write
 * waking the other process) cost every pair the same and, on a VM, most of a
 * call: this is the lead left over the SDK once a call does next to nothing else.
 */
const ceiling = {
  label: "floor / SDK (the bare pair's lead)",
  numerator: "floor",
  denominator: "sdk",
  metrics: ["seqRate"]
}

/**
 * The CPU time so far of this process's children (the stdio server of the
 * pair just started), microseconds; NaN where there is no `/proc`.
 */
const serversCpu = (): number => {
  try {
    let micros = 0
    for (const pid of Hop.childrenOf(process.pid)) micros += Hop.cpuMicros(pid)
    return micros
  } catch {
    return Number.NaN
  }
}

const metrics: ReadonlyArray<Metric> = [
  ...latencyMetrics("seq"),
  cpuMetric("seq"),
  serverCpuMetric("seq"),
  { key: "coldStart", label: "cold start ms", digits: 0 },
  { key: "coldStartBundled", label: "cold start ms, bundled", digits: 0 }
]

/** One start of each kind, so that Node's compile cache holds the code before cold starts are timed. */
const warmUp = (bundles: Bundle.Bundles, text: string) => async (candidate: Spawned) => {
  const { pair } = await candidate.start()
  await pair.close()
  await bundledColdStart(candidate, bundles, text)
}

/** Spawn to initialized from the bundle, checked with one call. */
const bundledColdStart = async (candidate: Spawned, bundles: Bundle.Bundles, text: string) => {
  if (candidate.startBundled === undefined) return {}
  const { pair, coldStartMs } = await candidate.startBundled(bundles)
  try {
    if ((await pair.call(text)) !== text) throw new Error(`${candidate.label} (bundled): echo returned something else`)
    return { coldStartBundled: coldStartMs }
  } finally {
    await pair.close()
  }
}

export const workload: Workload = {
  id: "W2",
  title: "stdio",
  run: async (settings) => {
    const count = byMode(settings, { full: 10_000, quick: 300, smoke: 20 })
    const text = "hello"
    const bundles = await Bundle.make()
    const series = await rounds(
      settings,
      candidates,
      async (candidate) => {
        const { pair, coldStartMs } = await candidate.start()
        let measured: Record<string, number>
        try {
          if ((await pair.call(text)) !== text) throw new Error(`${candidate.label}: echo returned something else`)
          const before = serversCpu()
          const sequential = await pair.sequential(count, text)
          const serverCpu = (serversCpu() - before) / count
          measured = {
            seqRate: sequential.callsPerSecond,
            seqP50: sequential.p50 * 1000,
            seqP99: sequential.p99 * 1000,
            seqCpu: sequential.cpuPerCall,
            seqServerCpu: serverCpu,
            coldStart: coldStartMs
          }
        } finally {
          await pair.close()
        }
        return { ...measured, ...(await bundledColdStart(candidate, bundles, text)) }
      },
      warmUp(bundles, text)
    ).finally(bundles.remove)
    return [
      {
        id: "W2-stdio",
        title: `W2 stdio: ${count.toLocaleString("en-US")} sequential calls, cold start`,
        metrics,
        ratios: [
          ...standardRatios(["seqRate", "seqCpu", "seqServerCpu", "coldStart", "coldStartBundled"]),
          ...floorHalves,
          ceiling
        ],
        notes: [
          "Servers are `.ts` entry points run by this Node (type stripping), each with Node's compile cache on (filled by the warm-up); cold start is spawn to initialized.",
          "Cold start, bundled: the same three servers each bundled by rolldown (ESM, tree-shaken, not minified) into one file and started the same way, as a stdio server shipped through a registry usually is; loading the modules one by one is most of a start.",
          "CPU µs/call is the client's: this process's `process.cpuUsage()` (user + system) over the sequential calls, divided by their count (the server's CPU is not in it); server CPU µs/call is the server process's, every thread, from `/proc/<pid>/task/*/schedstat` over the same calls; the floor row is a bare Node client (NDJSON over the child's pipes, no framework), the floor a client's CPU is measured against. A ratio below 1 is less CPU.",
          "effect-mcp speaks 2025-11-25 to itself here; its client offers every revision to the SDK server (a `server/discover` probe, then `initialize`).",
          "The floor halves: the bare client (which then opens with `initialize` and `notifications/initialized`) facing the effect-mcp server, and the effect-mcp client (on 2025-11-25) facing the bare server (which then answers `initialize`): over the floor pair, what each half of effect-mcp costs a call. The client's CPU there is measured against the bare client's with the same server. The server's CPU (floor client) is measured against the bare server's.",
          "floor / SDK: the bare pair over the SDK's, round by round. A call's two wake-ups (each side's pipe write waking the other process) cost every pair the same and, on a VM, most of a call, so this is the lead left over the SDK once a call does next to nothing else; run a pair under `taskset -c 0` to see what the libraries alone cost (see the README)."
        ],
        series
      },
      // The installed tables pack and install every package (most of a minute): not for a smoke run.
      ...(settings.smoke === true ? [] : await W2ColdStart.run(settings))
    ]
  }
}
