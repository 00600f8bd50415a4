/**
 * Connects the official SDK's `Transport` interface to one end of a memory
 * transport pair: frames cross as JSON text both ways, as they would on a wire.
 */
import type { Transport as SdkTransport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

const viaJson = <A>(value: unknown): A => JSON.parse(JSON.stringify(value)) as A

export const make = (end: MemoryTransport.End): Effect.Effect<SdkTransport, never, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<never>()
    const runFork = Effect.runForkWith(context)
    let started = false
    const transport: SdkTransport = {
      start: async () => {
        if (started) return
        started = true
        runFork(
          end.incoming.pipe(
            Stream.runForEach((frame) => {
              if (Result.isFailure(frame)) return Effect.void
              const messages: ReadonlyArray<unknown> = Array.isArray(frame.success) ? frame.success : [frame.success]
              // The SDK runs notification handlers a microtask late but settles responses at once; a
              // wire never delivers two frames in one tick, so each frame gets its own turn here too.
              return Effect.forEach(
                messages,
                (message) =>
                  Effect.andThen(
                    Effect.sync(() => transport.onmessage?.(viaJson<JSONRPCMessage>(message))),
                    Effect.promise(() => Promise.resolve())
                  ),
                { discard: true }
              )
            }),
            Effect.ensuring(Effect.sync(() => transport.onclose?.()))
          )
        )
      },
      send: (message) => Effect.runPromise(Effect.orDie(end.send(viaJson(message)))),
      close: () => Effect.runPromise(end.close)
    }
    return transport
  })
