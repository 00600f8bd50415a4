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
    // W4 opens its 1,050 sessions from one address, past the default quota of 1,000 per client.
    NodeHttpServer.layerStreamableHttp({
      session: McpServer.makeSession,
      responseMode: mode,
      maxBodyBytes,
      maxSessionsPerClient: 10_000
    })
  ),
  Effect.provide(EchoServer.layer)
)

NodeRuntime.runMain(program)
