/**
 * What a server answers a request that names a revision before any handshake,
 * and what a client makes of a server with no revision in common: the error
 * lists what each side speaks.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as Effect from "effect/Effect"
import { linked, rawAgainstServer } from "./fixtures.ts"

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
