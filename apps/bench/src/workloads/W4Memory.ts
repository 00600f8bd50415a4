/**
 * W4, memory: 1,000 idle initialized Streamable HTTP sessions (2025-11-25,
 * JSON responses) opened on a fresh server process by the same bare client,
 * after 500 warm-up sessions; the server's heap and RSS after a full
 * collection, per session. Then the client side: 300 connected clients,
 * each with its own server over the implementation's in-memory transport,
 * each having made one call; this process's heap per client.
 */
import { Agent } from "node:http"
import * as EffectMcp from "../EffectMcp.ts"
import * as Http from "../Http.ts"
import type { Pair } from "../Pair.ts"
import * as Sdk from "../Sdk.ts"
import type { Metric, Table } from "../Table.ts"
import { byMode, type Candidate, collectGarbage, rounds, type Settings, type Workload } from "../Workload.ts"

const clientCandidates: ReadonlyArray<Candidate & { readonly connect: () => Promise<Pair> }> = [
  { id: "effect", label: "effect-mcp", connect: () => EffectMcp.inProcess({ supportedVersions: ["2025-11-25"] }) },
  { id: "sdk", label: "SDK 1.32.2", connect: Sdk.inProcess }
]

/** The heap of `count` connected clients (each with its own in-process server), per client. */
const clients = async (settings: Settings): Promise<Table> => {
  const count = byMode(settings, { full: 300, quick: 20, smoke: 5 })
  const warmup = byMode(settings, { full: 100, quick: 5, smoke: 2 })
  const open = async (connect: () => Promise<Pair>, n: number) => {
    const pairs: Array<Pair> = []
    for (let i = 0; i < n; i++) {
      const pair = await connect()
      if ((await pair.call("hello")) !== "hello") throw new Error("echo returned something else")
      pairs.push(pair)
    }
    return pairs
  }
  const series = await rounds(settings, clientCandidates, async (candidate) => {
    // One-time costs (lazy modules, caches, compiled code) are paid before the baseline.
    for (const pair of await open(candidate.connect, warmup)) await pair.close()
    collectGarbage()
    const before = process.memoryUsage().heapUsed
    const pairs = await open(candidate.connect, count)
    collectGarbage()
    const after = process.memoryUsage().heapUsed
    for (const pair of pairs) await pair.close()
    return { clientHeap: (after - before) / count / 1024 }
  })
  return {
    id: "W4-clients",
    title: `W4 memory: ${count.toLocaleString("en-US")} connected clients, each with its own in-process server`,
    metrics: [{ key: "clientHeap", label: "heap per client and its server, KiB", digits: 2 }],
    ratios: [{ label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics: ["clientHeap"] }],
    notes: [
      "Growth of this process's heap after a full collection, divided by the clients: each client connected over its implementation's in-memory transport to a server of its own (server and session), and having made one call.",
      "A host holds one client per server it uses; the server's share of a pair is small next to the client's (an idle effect-mcp server session is the W4-memory row above)."
    ],
    series
  }
}

const candidates: ReadonlyArray<Candidate & { readonly impl: Http.Impl }> = [
  { id: "effect", label: "effect-mcp", impl: "effect" },
  { id: "sdk", label: "SDK 1.32.2", impl: "sdk" },
  { id: "floor", label: "floor (an id in a map)", impl: "floor" }
]

const metrics: ReadonlyArray<Metric> = [
  { key: "heap", label: "heap per session, KiB", digits: 2 },
  { key: "rss", label: "RSS per session, KiB", digits: 2 }
]

export const workload: Workload = {
  id: "W4",
  title: "memory of idle sessions",
  run: async (settings) => {
    const sessions = byMode(settings, { full: 1_000, quick: 20, smoke: 5 })
    // The warm-up pays the one-time costs: V8 keeps compiling the session paths for hundreds of sessions
    // (measured on effect-mcp: 50 warm-up sessions left ~600 B of freshly compiled code in each of the
    // next 1,000 sessions' share, 400 left ~0), and that code is no session's memory.
    const warmup = byMode(settings, { full: 500, quick: 5, smoke: 2 })
    const series = await rounds(settings, candidates, async (candidate) => {
      const server = await Http.spawnServer(candidate.impl, "json")
      const agent = new Agent({ keepAlive: true, maxSockets: 16 })
      try {
        const open = async (n: number) => {
          // 16 at a time: fast, and not a burst that leaves transient garbage behind.
          let next = 0
          await Promise.all(
            Array.from({ length: 16 }, async () => {
              while (next < n) {
                next++
                await Http.openIdleSession(server.url, agent)
              }
            })
          )
        }
        // One-time costs (lazy modules, caches, JIT) are paid before the baseline.
        await open(warmup)
        const before = await server.memory()
        await open(sessions)
        const after = await server.memory()
        return {
          heap: (after.heapUsed - before.heapUsed) / sessions / 1024,
          rss: (after.rss - before.rss) / sessions / 1024
        }
      } finally {
        agent.destroy()
        await server.close()
      }
    })
    return [
      {
        id: "W4-memory",
        title: `W4 memory: ${sessions.toLocaleString("en-US")} idle initialized HTTP sessions`,
        metrics,
        ratios: [
          { label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics: ["heap", "rss"] },
          { label: "effect-mcp / floor", numerator: "effect", denominator: "floor", metrics: ["heap", "rss"] }
        ],
        notes: [
          "Growth of the server process after a full collection, divided by the sessions; RSS is coarse (pages, allocator)."
        ],
        series
      },
      await clients(settings)
    ]
  }
}
