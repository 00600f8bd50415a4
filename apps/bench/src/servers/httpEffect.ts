/**
 * The effect-mcp HTTP echo server: McpServer sessions through
 * `NodeHttpServer.layerStreamableHttp` (`httpEffect.ts <json|sse>`).
 */
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as EchoServer from "../EchoServer.ts"
import { maxBodyBytes, mode, ready } from "./httpCommon.ts"

const program = Effect.gen(function* () {
  ready(yield* NodeHttpServer.url)
  return yield* Effect.never
}).pipe(
  Effect.provide(
    NodeHttpServer.layerStreamableHttp({ session: McpServer.makeSession, responseMode: mode, maxBodyBytes })
  ),
  Effect.provide(EchoServer.layer)
)

NodeRuntime.runMain(program)
