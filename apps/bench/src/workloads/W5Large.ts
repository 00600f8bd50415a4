/**
 * W5, large results: `echo` of 1 MiB and of 10 MiB of text (so the request
 * is as large as the result) in process, over stdio and over HTTP (JSON
 * responses). Each cell is the mean time of one call in the round.
 */
import * as Http from "../Http.ts"
import type { Pair } from "../Pair.ts"
import type { Metric, Table } from "../Table.ts"
import { byMode, type Candidate, rounds, type Workload } from "../Workload.ts"
import * as W1 from "./W1InProcess.ts"
import * as W2 from "./W2Stdio.ts"

interface Connector extends Candidate {
  readonly connect: () => Promise<Pair>
}

const pick = <C extends Candidate>(all: ReadonlyArray<C>, ids: ReadonlyArray<string>): Array<C> =>
  ids.map((id) => all.find((c) => c.id === id)!)

const text = (bytes: number) => "x".repeat(bytes)

export const workload: Workload = {
  id: "W5",
  title: "large results",
  run: async (settings) => {
    const sizes = byMode(settings, {
      full: [
        { key: "small", bytes: 1024 * 1024, label: "1 MiB", calls: 10 },
        { key: "large", bytes: 10 * 1024 * 1024, label: "10 MiB", calls: 3 }
      ],
      quick: [
        { key: "small", bytes: 64 * 1024, label: "64 KiB", calls: 2 },
        { key: "large", bytes: 256 * 1024, label: "256 KiB", calls: 2 }
      ],
      smoke: [
        { key: "small", bytes: 16 * 1024, label: "16 KiB", calls: 1 },
        { key: "large", bytes: 64 * 1024, label: "64 KiB", calls: 1 }
      ]
    })
    const metrics: ReadonlyArray<Metric> = sizes.map((s) => ({ key: s.key, label: `${s.label} ms/call`, digits: 1 }))
    const payloads = new Map(sizes.map((s) => [s.key, text(s.bytes)]))
    // A call that takes longer than this is given up (the SDK's stdio framing is quadratic in the line length).
    const limitMs = settings.quick ? 10_000 : 20_000
    const within = <A>(promise: Promise<A>): Promise<A | undefined> => {
      let timer: ReturnType<typeof setTimeout> | undefined
      return Promise.race([
        promise,
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), limitMs)
        })
      ]).finally(() => clearTimeout(timer))
    }
    // A size a candidate gave up on is not tried again in later rounds.
    const givenUp = new Set<string>()
    const measure = async (pair: Pair, id: string) => {
      const out: Record<string, number> = {}
      for (const size of sizes) {
        const payload = payloads.get(size.key)!
        if (givenUp.has(`${id}/${size.key}`)) {
          out[size.key] = Number.NaN
          continue
        }
        const first = await within(pair.call(payload))
        if (first === undefined) {
          givenUp.add(`${id}/${size.key}`)
          out[size.key] = Number.NaN
          break
        }
        if (first.length !== size.bytes) throw new Error("echo returned something else")
        const start = performance.now()
        for (let i = 0; i < size.calls; i++) await pair.call(payload)
        out[size.key] = (performance.now() - start) / size.calls
      }
      return out
    }
    const table = async (id: string, title: string, connectors: ReadonlyArray<Connector>): Promise<Table> => ({
      id,
      title,
      metrics,
      ratios: [
        { label: "effect-mcp / SDK", numerator: "effect", denominator: "sdk", metrics: sizes.map((s) => s.key) },
        { label: "effect-mcp / floor", numerator: "effect", denominator: "floor", metrics: sizes.map((s) => s.key) }
      ],
      notes: [
        "Lower is better: milliseconds per call, request and result each carrying the text.",
        `n/a: the first call did not complete within ${limitMs / 1000} s; the size was given up for the remaining rounds.`
      ],
      series: await rounds(settings, connectors, async (connector) => {
        const pair = await connector.connect()
        try {
          return await measure(pair, `${id}/${connector.id}`)
        } finally {
          await pair.close()
        }
      })
    })

    const tables: Array<Table> = []
    settings.log(" in process")
    tables.push(
      await table("W5-in-process", "W5 large results, in process", pick(W1.candidates, ["effect", "sdk", "floor"]))
    )
    settings.log(" stdio")
    tables.push(
      await table(
        "W5-stdio",
        "W5 large results, stdio",
        pick(W2.candidates, ["effect", "sdk", "floor"]).map((c) => ({
          ...c,
          connect: async () => (await c.start()).pair
        }))
      )
    )
    settings.log(" HTTP")
    const servers = new Map<Http.Impl, Http.Server>()
    try {
      for (const impl of ["effect", "sdk", "floor"] as const) servers.set(impl, await Http.spawnServer(impl, "json"))
      const url = (impl: Http.Impl) => servers.get(impl)!.url
      tables.push(
        await table("W5-http", "W5 large results, Streamable HTTP (JSON responses)", [
          { id: "effect", label: "effect-mcp", connect: () => Http.effectClient(url("effect")) },
          { id: "sdk", label: "SDK 1.32.2", connect: () => Http.sdkClient(url("sdk")) },
          { id: "floor", label: "floor", connect: () => Http.floorClient(url("floor")) }
        ])
      )
    } finally {
      for (const server of servers.values()) await server.close()
    }
    return tables
  }
}
