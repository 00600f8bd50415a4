/**
 * A session of either role on one end of a memory pair whose frames cross as
 * JSON text (the real codec), and the test playing the other side message by
 * message on the raw end: `next` takes what the session sent, in order.
 */
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { clientInfo, serverInfo } from "./fixtures.ts"

/** The raw side: sends frames, takes the session's messages one by one (a batch or undecodable frame dies). */
export interface RawSide {
  readonly send: (frame: Transport.Outgoing) => Effect.Effect<void, Transport.TransportError>
  readonly next: Effect.Effect<JsonRpc.Message>
}

const rawSide = (end: MemoryTransport.End): Effect.Effect<RawSide, never, Scope.Scope> =>
  Effect.gen(function* () {
    const inbox = yield* Queue.unbounded<JsonRpc.Message>()
    yield* end.incoming.pipe(
      Stream.runForEach((frame) =>
        Result.isSuccess(frame) && !JsonRpcCodec.isBatch(frame.success)
          ? Queue.offer(inbox, frame.success as JsonRpc.Message)
          : Effect.die(`unexpected frame ${JSON.stringify(frame)}`)
      ),
      Effect.forkScoped
    )
    return { send: (frame) => end.send(frame), next: Queue.take(inbox) }
  })

/** A server session (not initialized yet) and the raw client side. */
export const serverAndRawClient = (options: Partial<ServerSession.Options> = {}) =>
  Effect.gen(function* () {
    const [serverEnd, rawEnd] = yield* MemoryTransport.makePair({ codec: true })
    const server = yield* ServerSession.make({ serverInfo, capabilities: {}, ...options }).pipe(
      Effect.provideService(Transport.Transport, serverEnd)
    )
    return { server, ...(yield* rawSide(rawEnd)) }
  })

/** A 2025-03-26 client session, initialized by the raw server side (which declares `tools`). */
export const clientAndRawServer = (options: Partial<ClientSession.Options> = {}) =>
  Effect.gen(function* () {
    const [clientEnd, rawEnd] = yield* MemoryTransport.makePair({ codec: true })
    const raw = yield* rawSide(rawEnd)
    const connecting = yield* ClientSession.make({
      clientInfo,
      capabilities: {},
      supportedVersions: ["2025-03-26"],
      ...options
    }).pipe(Effect.provideService(Transport.Transport, clientEnd), Effect.forkScoped)
    const initialize = (yield* raw.next) as JsonRpc.Request
    yield* raw.send({
      jsonrpc: "2.0",
      id: initialize.id,
      result: { protocolVersion: "2025-03-26", capabilities: { tools: {} }, serverInfo }
    })
    const initialized = yield* raw.next
    if (!("method" in initialized) || initialized.method !== "notifications/initialized") {
      return yield* Effect.die(`expected notifications/initialized, got ${JSON.stringify(initialized)}`)
    }
    return { client: yield* Fiber.join(connecting), ...raw }
  })
