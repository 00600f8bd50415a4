/**
 * The effect-mcp HTTP echo server as one runner of a cluster
 * (`httpCluster.ts <json|sse> <database URL> <runner port>`): NodeClusteredServer
 * on 127.0.0.1, the cluster's state in the given database (W8).
 */
import * as NodeClusteredServer from "@effect-mcp/cluster/NodeClusteredServer"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as EchoServer from "../EchoServer.ts"
import { mode, ready } from "./httpCommon.ts"

const program = Effect.gen(function* () {
  ready(yield* NodeHttpServer.url)
  return yield* Effect.never
}).pipe(
  Effect.provide(
    NodeClusteredServer.layer(EchoServer.layer, {
      storage: process.argv[3]!,
      runnerPort: Number(process.argv[4]),
      responseMode: mode,
      maxSessionsPerClient: 10_000
    })
  )
)

NodeRuntime.runMain(program)
