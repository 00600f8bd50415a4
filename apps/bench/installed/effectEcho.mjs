// The effect-mcp echo server as the getting-started guide writes it, against the installed packages: plain
// JavaScript over the built dist.
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const Echo = Tool.make("echo", {
  description: "Returns its text argument",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "1.0.0" })))

NodeRuntime.runMain(NodeMcpServer.serveStdio(Server))
