/**
 * The mixed pairs in one process: the SDK's client against the effect-mcp
 * server, and the effect-mcp client against the SDK's server, so each half
 * is compared alone. Both run over one MemoryTransport pair; the SDK side
 * reaches its end through the SDK's `Transport` interface (messages cross as
 * objects, as within either framework's own in-memory pair).
 */
import type * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as MemoryTransportModule from "@effect-mcp/engine/MemoryTransport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type { Transport as SdkTransport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as EffectMcp from "./EffectMcp.ts"
import type { Pair } from "./Pair.ts"
import * as Sdk from "./Sdk.ts"

/** The SDK's `Transport` over one end of a memory pair. */
export const sdkTransport = (end: MemoryTransport.End): SdkTransport => {
  let reader: Fiber.Fiber<void, unknown> | undefined
  const transport: SdkTransport = {
    start: async () => {
      reader = Effect.runFork(
        Stream.runForEachArray(end.incoming, (frames) =>
          Effect.sync(() => {
            for (const frame of frames) {
              if (Result.isFailure(frame)) continue
              const decoded = frame.success
              if (Array.isArray(decoded)) {
                for (const message of decoded) transport.onmessage?.(message as JSONRPCMessage)
              } else transport.onmessage?.(decoded as JSONRPCMessage)
            }
          })
        ).pipe(Effect.ensuring(Effect.sync(() => transport.onclose?.())))
      )
    },
    send: (message) => Effect.runPromise(end.send(message as JsonRpc.Message)),
    close: async () => {
      await Effect.runPromise(end.close)
      if (reader !== undefined) await Effect.runPromise(Fiber.interrupt(reader))
    }
  }
  return transport
}

/** The SDK client against the effect-mcp server. */
export const sdkClientEffectServer = async (): Promise<Pair> => {
  const [ends, release] = await EffectMcp.scoped(
    Effect.gen(function* () {
      const [clientEnd, serverEnd] = yield* MemoryTransportModule.makePair()
      yield* EffectMcp.serve(serverEnd)
      return clientEnd
    })
  )
  const client = await Sdk.connect(sdkTransport(ends))
  return Sdk.clientPair(client, release)
}

/** The effect-mcp client against the SDK server. */
export const effectClientSdkServer = async (): Promise<Pair> => {
  const server = Sdk.makeServer()
  const [client, release] = await EffectMcp.scoped(
    Effect.gen(function* () {
      const [clientEnd, serverEnd] = yield* MemoryTransportModule.makePair()
      yield* Effect.promise(() => server.connect(sdkTransport(serverEnd)))
      return yield* EffectMcp.connect(clientEnd)
    })
  )
  return EffectMcp.clientPair(client, async () => {
    await server.close()
    await release()
  })
}
