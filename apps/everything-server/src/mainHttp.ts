/**
 * The `--http` half of `main.ts` (`mcp-everything-server --http`): Streamable HTTP at `/mcp` and the legacy
 * HTTP+SSE transport at `/sse` (messages to `/messages`). Kept out of
 * `main.ts` so that a stdio start never loads the HTTP stack (some 120
 * modules): `main.ts` imports this module only for `--http`.
 */
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as SseServer from "@effect-mcp/engine/SseServer"
import * as StreamableHttpServer from "@effect-mcp/engine/StreamableHttpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Cli from "./Cli.ts"

/** The `Mcp-Param-*` headers of the registered tools, read from their input schemas as they are now. */
const paramHeaders = (server: McpServer.McpServerShape) => (toolName: string) => {
  const tool = server.tools.get(toolName)
  return tool === undefined ? undefined : StreamableHttpServer.paramHeadersOf(tool.item.item.definition.inputSchema)
}

/** Serves the server over HTTP as `cli` says, printing the URL on stderr; runs until interrupted. */
export const serve = (cli: Cli.Http) => {
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
