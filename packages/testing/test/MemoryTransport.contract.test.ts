import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Effect from "effect/Effect"
import * as FaultTransport from "../src/FaultTransport.ts"
import * as TransportContract from "../src/TransportContract.ts"

TransportContract.suite("MemoryTransport (objects)", MemoryTransport.makePair(), {
  fastPaths: { trySend: true, push: true }
})

TransportContract.suite(
  "MemoryTransport (codec, small buffers)",
  MemoryTransport.makePair({ codec: true, capacity: 16 }),
  {
    malformed: "objects",
    fastPaths: { trySend: true, push: true }
  }
)

// A fault wrapper with no faults configured must be a transport like any other.
TransportContract.suite(
  "FaultTransport without faults, over MemoryTransport (codec)",
  Effect.gen(function* () {
    const [a, b] = yield* MemoryTransport.makePair({ codec: true, capacity: 16 })
    const fa = yield* FaultTransport.make(a, { capacity: 16 })
    const fb = yield* FaultTransport.make(b, { capacity: 16 })
    return [fa, fb] as const
  }),
  { malformed: "objects" }
)
