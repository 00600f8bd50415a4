/**
 * The effect-mcp echo server over this process's stdin/stdout, loaded by
 * `effectStdio.ts` once Node's compile cache is on.
 */
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as EchoServer from "../EchoServer.ts"

NodeRuntime.runMain(McpServer.serve.pipe(Effect.provide(EchoServer.layer), Effect.provide(NodeStdio.layerServer())))
