import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Effect from "effect/Effect"
import type * as Duration from "effect/Duration"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"

export const serverInfo = { name: "test-server", version: "1.0.0" }
export const clientInfo = { name: "test-client", version: "1.0.0" }

/** A server session on one end of a memory pair, and the raw other end with a message inbox. */
export const rawAgainstServer = (options: Partial<ServerSession.Options> = {}) =>
  Effect.gen(function* () {
    const [serverEnd, rawEnd] = yield* MemoryTransport.makePair()
    const server = yield* ServerSession.make({ serverInfo, capabilities: {}, ...options }).pipe(
      Effect.provideService(Transport.Transport, serverEnd)
    )
    const inbox = yield* Queue.unbounded<JsonRpc.Message | ReadonlyArray<JsonRpc.Message>>()
    yield* rawEnd.incoming.pipe(
      Stream.runForEach((frame) =>
        Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as never) : Effect.void
      ),
      Effect.forkScoped
    )
    const send = (frame: Transport.Outgoing) => rawEnd.send(frame)
    const next = Queue.take(inbox)
    return { server, rawEnd, send, next, inbox }
  })

/** `rawAgainstServer` past the handshake: `initialize` sent and answered, then `notifications/initialized`. */
export const rawInitialized = (options: Partial<ServerSession.Options> = {}) =>
  Effect.gen(function* () {
    const raw = yield* rawAgainstServer(options)
    yield* raw.send(initializeRequest(1))
    yield* raw.next
    yield* raw.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    return raw
  })

export const initializeRequest = (id: JsonRpc.RequestId, version: string = "2025-11-25", capabilities = {}) =>
  ({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: version, capabilities, clientInfo }
  }) as const

/** Moves the TestClock in steps until the fiber is done (bounded), then joins it. */
export const advanceUntilDone = <A, E>(fiber: Fiber.Fiber<A, E>, step: Duration.Input, maxSteps = 10_000) =>
  Effect.gen(function* () {
    for (let i = 0; i < maxSteps && fiber.pollUnsafe() === undefined; i++) {
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.join(fiber)
  })

/** A client and a server session linked in memory. */
export const linked = (options: {
  readonly server?: Partial<ServerSession.Options>
  readonly client?: Partial<ClientSession.Options>
  readonly codec?: boolean
  readonly clientVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion>
}) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: options.codec ?? false })
    const server: Session.SessionShape = yield* ServerSession.make({
      serverInfo,
      capabilities: {},
      ...options.server
    }).pipe(Effect.provideService(Transport.Transport, serverEnd))
    const client: Session.SessionShape = yield* ClientSession.make({
      clientInfo,
      capabilities: {},
      ...(options.clientVersions === undefined ? {} : { supportedVersions: options.clientVersions }),
      ...options.client
    }).pipe(Effect.provideService(Transport.Transport, clientEnd))
    return { server, client, serverEnd, clientEnd }
  })

/** A client session on one end of a memory pair, the raw other end answering its handshake. */
export const rawAgainstClient = (options: Partial<ClientSession.Options> = {}, serverCapabilities = {}) =>
  Effect.gen(function* () {
    const [clientEnd, rawEnd] = yield* MemoryTransport.makePair()
    const inbox = yield* Queue.unbounded<JsonRpc.Message | ReadonlyArray<JsonRpc.Message>>()
    yield* rawEnd.incoming.pipe(
      Stream.runForEach((frame) =>
        Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as never) : Effect.void
      ),
      Effect.forkScoped
    )
    const next = Queue.take(inbox) as Effect.Effect<JsonRpc.Message>
    const clientFiber = yield* ClientSession.make({
      clientInfo,
      capabilities: {},
      supportedVersions: ["2025-11-25"],
      ...options
    }).pipe(Effect.provideService(Transport.Transport, clientEnd), Effect.forkScoped)
    const init = (yield* next) as JsonRpc.Request
    yield* rawEnd.send({
      jsonrpc: "2.0",
      id: init.id,
      result: { protocolVersion: "2025-11-25", capabilities: serverCapabilities, serverInfo }
    })
    const initialized = yield* next
    const client = yield* Fiber.join(clientFiber)
    return { client, rawEnd, send: (frame: Transport.Outgoing) => rawEnd.send(frame), next, initialized }
  })

/**
 * Forks `effect` and returns its fiber once the work it set going has come to
 * rest: it, and every fiber it resumed or forked, has suspended or finished.
 * It starts on a TestClock wake (the clock moves 1 ms), and `TestClock.adjust`
 * returns only then: a signal from the clock, not a count of scheduler turns.
 * Work resumed by I/O or a microtask is not waited for.
 */
export const forkIdle = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Effect.andThen(Effect.sleep(1), effect))
    yield* TestClock.adjust(1)
    return fiber
  })

/** Runs `effect` and returns its result once all it set going has come to rest (see `forkIdle`). */
export const runIdle = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flatMap(forkIdle(effect), Fiber.join)
