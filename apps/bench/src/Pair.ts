/**
 * A connected client and server of one implementation (or of two, for the
 * mixed pairs), driven through its own idiom: the SDK and the floors with
 * `async` loops, effect-mcp with Effect loops. Every implementation times
 * its calls the same way (`performance.now` around each call).
 */
import { cpuStart, type RunResult, runResult } from "./Stats.ts"

export interface Pair {
  /** `count` echo calls, one after another. */
  readonly sequential: (count: number, text: string) => Promise<RunResult>
  /** `count` echo calls with `inFlight` outstanding at any time. */
  readonly concurrent: (count: number, inFlight: number, text: string) => Promise<RunResult>
  /** One call, returning the echoed text (for correctness checks and large payloads). */
  readonly call: (text: string) => Promise<string>
  readonly close: () => Promise<void>
}

/** Makes `sequential` and `concurrent` from a Promise-returning call. */
export const promiseLoops = (call: (text: string) => Promise<unknown>): Pick<Pair, "sequential" | "concurrent"> => ({
  sequential: async (count, text) => {
    const latencies = new Float64Array(count)
    const cpu = cpuStart()
    const start = performance.now()
    for (let i = 0; i < count; i++) {
      const t0 = performance.now()
      await call(text)
      latencies[i] = performance.now() - t0
    }
    return runResult(count, performance.now() - start, latencies, cpu)
  },
  concurrent: async (count, inFlight, text) => {
    const latencies = new Float64Array(count)
    let next = 0
    const worker = async () => {
      while (next < count) {
        const i = next++
        const t0 = performance.now()
        await call(text)
        latencies[i] = performance.now() - t0
      }
    }
    const cpu = cpuStart()
    const start = performance.now()
    await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker))
    return runResult(count, performance.now() - start, latencies, cpu)
  }
})

/** The text of the first content block of a tool result. */
export const textOf = (result: unknown): string => {
  const content = (result as { readonly content?: ReadonlyArray<{ readonly text?: unknown }> }).content
  const text = content?.[0]?.text
  if (typeof text !== "string") throw new Error(`unexpected tool result: ${JSON.stringify(result).slice(0, 200)}`)
  return text
}
