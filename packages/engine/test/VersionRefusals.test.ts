/**
 * What a server answers a request that names a revision before any handshake,
 * and what a client makes of a server with no revision in common: the error
 * lists what each side speaks.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { clientInfo, linked, rawAgainstServer, serverInfo } from "./fixtures.ts"

/** A client's handshake against a raw server end: the `initialize` it sends, and the fiber of its handshake. */
const handshakeAgainstRaw = (supportedVersions: ReadonlyArray<ProtocolVersion.ProtocolVersion>, capabilities = {}) =>
  Effect.gen(function* () {
    const [clientEnd, rawEnd] = yield* MemoryTransport.makePair()
    const inbox = yield* Queue.unbounded<JsonRpc.Request>()
    yield* rawEnd.incoming.pipe(
      Stream.runForEach((frame) =>
        Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as never) : Effect.void
      ),
      Effect.forkScoped
    )
    const handshake = yield* ClientSession.make({ clientInfo, capabilities, supportedVersions }).pipe(
      Effect.provideService(Transport.Transport, clientEnd),
      Effect.forkScoped
    )
    const initialize = yield* Queue.take(inbox)
    const answer = (protocolVersion: string) =>
      rawEnd.send({
        jsonrpc: "2.0",
        id: initialize.id,
        result: { protocolVersion, capabilities: {}, serverInfo }
      })
    return { initialize, answer, handshake: Fiber.join(handshake) }
  })

const META = (version: string) => ({ _meta: { "io.modelcontextprotocol/protocolVersion": version } })
const errorOf = (message: unknown) =>
  (message as { error?: { code: number; message: string; data?: { requested: string; supported: Array<string> } } })
    .error

describe("a request naming a revision before the handshake", () => {
  it.effect("in a stateful revision the server speaks: refused as not initialized, not as an unknown revision", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer({ capabilities: { tools: {} } })
      yield* send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: META("2025-11-25") })
      const error = errorOf(yield* next)
      assert.strictEqual(error?.code, -32600)
      assert.include(error?.message, "not initialized")
    })
  )

  it.effect("in the stateless revision, to a server without it: -32022 listing what the server speaks", () =>
    Effect.gen(function* () {
      const supportedVersions = ["2025-11-25", "2025-06-18"] as const
      const { send, next } = yield* rawAgainstServer({ supportedVersions })
      yield* send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: META("2026-07-28") })
      const error = errorOf(yield* next)
      assert.strictEqual(error?.code, -32022)
      assert.deepStrictEqual(error?.data, { requested: "2026-07-28", supported: [...supportedVersions] })
    })
  )

  it.effect("initialize, to a server of the stateless revision only: -32022 listing it", () =>
    Effect.gen(function* () {
      const { send, next } = yield* rawAgainstServer({ supportedVersions: ["2026-07-28"] })
      yield* send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } }
      })
      const error = errorOf(yield* next)
      assert.strictEqual(error?.code, -32022)
      assert.deepStrictEqual(error?.data, { requested: "2025-11-25", supported: ["2026-07-28"] })
    })
  )
})

describe("a client with no revision in common with its server", () => {
  for (const [clientVersions, serverVersions, serverVersion] of [
    [["2026-07-28"], ["2025-11-25", "2025-06-18"], "2025-11-25"],
    [["2025-11-25"], ["2026-07-28"], "2026-07-28"]
  ] as const) {
    it.effect(
      `fails with UnsupportedVersion naming both sides (client ${clientVersions}, server ${serverVersions})`,
      () =>
        Effect.gen(function* () {
          const error = (yield* Effect.flip(
            linked({ clientVersions, server: { supportedVersions: serverVersions } })
          )) as ClientSession.InitializeError
          assert.strictEqual(error._tag, "InitializeError")
          assert.strictEqual(error.reason, "UnsupportedVersion")
          assert.strictEqual(error.serverVersion, serverVersion)
          assert.strictEqual(
            error.message,
            `the server speaks ${serverVersions.join(", ")}; this client speaks ${clientVersions.join(", ")}`
          )
        })
    )
  }
})

describe("what a client declares in its initialize", () => {
  const capabilities = {
    sampling: {},
    roots: { listChanged: true },
    elicitation: { form: {} },
    tasks: { requests: { sampling: { createMessage: {} } } }
  }

  it.effect("only the capabilities of requests the revision has: a server takes a declaration at its word", () =>
    Effect.gen(function* () {
      const old = yield* handshakeAgainstRaw(["2024-11-05"], capabilities)
      const params = old.initialize.params as { protocolVersion: string; capabilities: object }
      assert.strictEqual(params.protocolVersion, "2024-11-05")
      assert.deepStrictEqual(params.capabilities, { sampling: {}, roots: { listChanged: true } })
      const recent = yield* handshakeAgainstRaw(["2025-11-25"], capabilities)
      assert.deepStrictEqual((recent.initialize.params as { capabilities: object }).capabilities, capabilities)
    }).pipe(Effect.scoped)
  )

  it.effect("a server answering a revision the client does not speak: the error names both sides", () =>
    Effect.gen(function* () {
      const { answer, handshake } = yield* handshakeAgainstRaw(["2025-11-25", "2025-06-18"])
      yield* answer("2099-01-01")
      const error = (yield* Effect.flip(handshake)) as ClientSession.InitializeError
      assert.strictEqual(error.reason, "UnsupportedVersion")
      assert.strictEqual(
        error.message,
        "the server answered protocol version 2099-01-01; this client speaks 2025-11-25, 2025-06-18"
      )
    }).pipe(Effect.scoped)
  )
})
