/**
 * What the HTTP echo servers (`httpEffect.ts`, `httpSdk.ts`, `httpFloor.ts`)
 * share. Each runs as a child process on 127.0.0.1 (W3, W4, W5), prints
 * `LISTENING <url>` on stdout when ready, and over the IPC channel answers
 * `"memory"` with its heap and RSS after a full collection (W4) and `"cpu"`
 * with the CPU time it used so far (W3, W8).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** The response mode asked for on the command line: `json` or `sse`. */
export const mode = (process.argv[2] ?? "json") as "json" | "sse"

export const maxBodyBytes = 64 * 1024 * 1024

export const ready = (url: string): void => {
  process.stdout.write(`LISTENING ${url}/mcp\n`)
}

process.on("message", (message) => {
  if (message === "cpu") {
    // User and system CPU of this process so far (µs): the workload takes the difference over a run.
    const usage = process.cpuUsage()
    process.send?.({ cpuMicros: usage.user + usage.system })
    return
  }
  if (message !== "memory") return
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  gc?.()
  const usage = process.memoryUsage()
  process.send?.({ heapUsed: usage.heapUsed, rss: usage.rss })
})
process.on("disconnect", () => process.exit(0))

export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Serves `handler` with `node:http` on 127.0.0.1 and a free port. */
export const listen = (handler: (req: IncomingMessage, res: ServerResponse) => void): void => {
  const server = createServer(handler)
  server.keepAliveTimeout = 60_000
  server.listen(0, "127.0.0.1", () => ready(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
}
