/**
 * The effect-mcp side of the benchmarks: an McpServer with the one `echo`
 * tool, and an McpClient driven by Effect loops (its own idiom: the loop is
 * one Effect program, not one Promise per call).
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import { fileURLToPath } from "node:url"
import * as EchoServer from "./EchoServer.ts"
import { type Pair, textOf } from "./Pair.ts"
import { cpuStart, runResult } from "./Stats.ts"

export { serverInfo } from "./EchoServer.ts"

export const clientInfo = { name: "bench-client", version: "1.0.0" }

/**
 * Serves one session over `transport` for as long as the current scope
 * lives (the server layer is built into that scope too).
 */
export const serve = (transport: Transport.TransportShape): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(EchoServer.layer)
    yield* McpServer.makeSession.pipe(
      Effect.provideContext(context),
      Effect.provideService(Transport.Transport, transport)
    )
  })

/** A connected client over `transport`, living in the current scope. */
export const connect = (
  transport: Transport.TransportShape,
  options?: ClientOptions
): Effect.Effect<McpClient.McpClientShape, McpClient.InitializeError, Scope.Scope> =>
  McpClient.make({ clientInfo, supportedVersions: options?.supportedVersions }).pipe(
    Effect.provideService(Transport.Transport, transport)
  )

export interface ClientOptions {
  /** Revisions the client offers; default all (so two effect-mcp peers speak the stateless 2026-07-28). */
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  /** Both sides traced (`--tracing`): sessions made and calls run with this tracer. Default: no tracer. */
  readonly tracer?: Tracer.Tracer | undefined
}

/** Drives a connected client; `release` closes whatever it runs over. */
export const clientPair = (
  client: McpClient.McpClientShape,
  release: () => Promise<void>,
  tracer?: Tracer.Tracer
): Pair => {
  const call =
    tracer === undefined
      ? (text: string) => client.callTool("echo", { text })
      : (text: string) => Effect.withTracer(client.callTool("echo", { text }), tracer)
  return {
    sequential: (count, text) =>
      Effect.runPromise(
        Effect.gen(function* () {
          const latencies = new Float64Array(count)
          const cpu = cpuStart()
          const start = performance.now()
          for (let i = 0; i < count; i++) {
            const t0 = performance.now()
            yield* call(text)
            latencies[i] = performance.now() - t0
          }
          return runResult(count, performance.now() - start, latencies, cpu)
        })
      ),
    concurrent: (count, inFlight, text) =>
      Effect.runPromise(
        Effect.gen(function* () {
          const latencies = new Float64Array(count)
          let next = 0
          const worker = Effect.gen(function* () {
            while (next < count) {
              const i = next++
              const t0 = performance.now()
              yield* call(text)
              latencies[i] = performance.now() - t0
            }
          })
          const cpu = cpuStart()
          const start = performance.now()
          yield* Effect.all(
            Array.from({ length: Math.min(inFlight, count) }, () => worker),
            {
              concurrency: "unbounded",
              discard: true
            }
          )
          return runResult(count, performance.now() - start, latencies, cpu)
        })
      ),
    call: (text) => Effect.runPromise(Effect.map(call(text), textOf)),
    close: release
  }
}

/** Runs `build` in a fresh scope; the returned release closes it. */
export const scoped = async <A, E>(
  build: Effect.Effect<A, E, Scope.Scope>
): Promise<readonly [A, () => Promise<void>]> => {
  const scope = Scope.makeUnsafe()
  const value = await Effect.runPromise(Scope.provide(build, scope))
  return [value, () => Effect.runPromise(Scope.close(scope, Exit.void))]
}

/** effect-mcp client and server in one process over a MemoryTransport pair. */
export const inProcess = async (options?: ClientOptions): Promise<Pair> => {
  const tracer = options?.tracer
  const build = Effect.gen(function* () {
    const [clientEnd, serverEnd] = yield* MemoryTransport.makePair()
    yield* serve(serverEnd)
    return yield* connect(clientEnd, options)
  })
  const [client, release] = await scoped(tracer === undefined ? build : Effect.withTracer(build, tracer))
  return clientPair(client, release, tracer)
}

/** The path of a server script under `servers/`. */
export const serverScript = (name: string): string => fileURLToPath(new URL(`./servers/${name}`, import.meta.url))

/** A connected pair and how long it took from spawn to initialized. */
export interface Started {
  readonly pair: Pair
  readonly coldStartMs: number
}

/** The effect-mcp client spawning `script` (any MCP server over stdio) with this Node. */
export const stdio = async (script: string, options?: ClientOptions): Promise<Started> => {
  const start = performance.now()
  const [client, release] = await scoped(
    Effect.gen(function* () {
      const transport = yield* NodeStdio.makeClient({ command: process.execPath, args: [script] })
      return yield* connect(transport, options)
    })
  )
  const coldStartMs = performance.now() - start
  return { pair: clientPair(client, release), coldStartMs }
}
