/**
 * `mcp-everything-server`: serves the everything server over stdio or HTTP.
 *
 *   mcp-everything-server --stdio
 *   mcp-everything-server --http [--port <n>] [--host <h>] [--stateless] [--json]
 *
 * Over HTTP, Streamable HTTP is at `/mcp` and the legacy HTTP+SSE transport
 * at `/sse` (messages to `/messages`). `--port 0` picks a free port; the URL
 * is printed on stderr either way (`listening on <url>`).
 */
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Cli from "./Cli.ts"
import * as EverythingServer from "./EverythingServer.ts"

const stdio = McpServer.serve.pipe(Effect.provide(NodeStdio.layerServer()))

// The HTTP stack is loaded only for `--http`: a stdio start (most starts, each a fresh process) skips it.
const http = (cli: Cli.Http) =>
  Effect.flatMap(
    Effect.promise(() => import("./mainHttp.ts")),
    (module) => module.serve(cli)
  )

const cli = Cli.parse(process.argv.slice(2))
if (typeof cli === "string") {
  process.stderr.write(`mcp-everything-server: ${cli}\n${Cli.usage}\n`)
  process.exitCode = 2
} else {
  const program = cli.mode === "stdio" ? stdio : http(cli)
  NodeRuntime.runMain(program.pipe(Effect.provide(EverythingServer.layer())))
}
