/**
 * The effect-mcp server every workload runs: one `echo` tool returning its
 * text argument. Kept apart from the client code so a server process loads
 * only what a server needs.
 */
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

export const serverInfo = { name: "bench-server", version: "1.0.0" }

export const echoTool = Tool.make("echo", {
  description: "Returns its text argument",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

/** The server with the echo tool registered. */
export const layer: Layer.Layer<McpServer.McpServer> = Tool.layer(echoTool).pipe(
  Layer.provideMerge(McpServer.layer(serverInfo))
)
