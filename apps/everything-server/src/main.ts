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
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as SseServer from "@effect-mcp/engine/SseServer"
import * as StreamableHttpServer from "@effect-mcp/engine/StreamableHttpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Cli from "./Cli.ts"
import * as EverythingServer from "./EverythingServer.ts"

const stdio = McpServer.serve.pipe(Effect.provide(NodeStdio.layerServer()))

/** The `Mcp-Param-*` headers of the registered tools, read from their input schemas as they are now. */
const paramHeaders = (server: McpServer.McpServerShape) => (toolName: string) => {
  const tool = server.tools.get(toolName)
  return tool === undefined ? undefined : StreamableHttpServer.paramHeadersOf(tool.item.item.definition.inputSchema)
}

const http = (cli: Cli.Http) => {
  const routes = Layer.mergeAll(
    Layer.unwrap(
      Effect.gen(function* () {
        const server = yield* McpServer.McpServer
        return StreamableHttpServer.layer({
          session: McpServer.makeSession,
          sessions: !cli.stateless,
          responseMode: cli.json ? "json" : "sse",
          paramHeaders: paramHeaders(server)
        })
      })
    ),
    SseServer.layer({ session: McpServer.makeSession })
  )
  return Effect.gen(function* () {
    const base = yield* NodeHttpServer.url
    yield* Console.error(`mcp-everything-server listening on ${base}/mcp (legacy SSE: ${base}/sse)`)
    return yield* Effect.never
  }).pipe(Effect.provide(NodeHttpServer.layer(routes, { host: cli.host, port: cli.port })))
}

const cli = Cli.parse(process.argv.slice(2))
if (typeof cli === "string") {
  process.stderr.write(`mcp-everything-server: ${cli}\n${Cli.usage}\n`)
  process.exitCode = 2
} else {
  const program = cli.mode === "stdio" ? stdio : http(cli)
  NodeRuntime.runMain(program.pipe(Effect.provide(EverythingServer.layer())))
}
