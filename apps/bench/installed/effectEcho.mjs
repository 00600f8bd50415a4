// The effect-mcp echo server as a user writes it against the installed packages: plain JavaScript, built dist.
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const echo = Tool.make("echo", {
  description: "Returns its text argument",
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const server = Tool.layer(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "1.0.0" })))

NodeRuntime.runMain(McpServer.serve.pipe(Effect.provide(server), Effect.provide(NodeStdio.layerServer())))
