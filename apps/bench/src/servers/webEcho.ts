/**
 * The effect-mcp echo server on Bun or Deno (W9): `WebHandler.make` over the echo server, stateful, JSON
 * responses, served by `Bun.serve` / `Deno.serve` on 127.0.0.1 and a free port. Prints `LISTENING <url>` on
 * stdout when ready, as the Node servers do (`httpCommon.ts`).
 *
 *   bun --conditions=@effect-mcp/source src/servers/webEcho.ts
 *   deno run --allow-net=127.0.0.1 --conditions=@effect-mcp/source src/servers/webEcho.ts
 */
import * as WebHandler from "@effect-mcp/server/WebHandler"
import * as EchoServer from "../EchoServer.ts"

/** The part of Bun's and Deno's globals this file uses (their type packages are not installed). */
interface Runtimes {
  readonly Bun?: {
    readonly serve: (options: {
      readonly hostname: string
      readonly port: number
      readonly idleTimeout: number
      readonly fetch: (request: Request) => Promise<Response>
    }) => { readonly port: number }
  }
  readonly Deno?: {
    readonly serve: (
      options: { readonly hostname: string; readonly port: number; readonly onListen: () => void },
      handler: (request: Request) => Promise<Response>
    ) => { readonly addr: { readonly port: number } }
  }
}
const runtime = globalThis as Runtimes

// The Node servers' settings (httpEffect.ts): a body cap that never bites, JSON responses.
const app = WebHandler.make(EchoServer.layer, { responseMode: "json", maxBodyBytes: 64 * 1024 * 1024 })

const port =
  runtime.Bun !== undefined
    ? runtime.Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 60, fetch: app.handler }).port
    : runtime.Deno !== undefined
      ? runtime.Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.handler).addr.port
      : undefined
if (port === undefined) throw new Error("neither Bun nor Deno: run this file with bun or deno")

console.log(`LISTENING http://127.0.0.1:${port}/mcp`)
