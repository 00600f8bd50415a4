import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Session from "@effect-mcp/engine/Session"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import * as SessionPair from "../src/SessionPair.ts"

const echo: Session.Handler = (params) => Effect.succeed({ echoed: params })

describe("SessionPair", () => {
  for (const codec of [false, true]) {
    it.effect(`connects a ready client and server (${codec ? "codec" : "objects"})`, () =>
      Effect.gen(function* () {
        const { client, server } = yield* SessionPair.make({
          codec,
          server: { capabilities: { tools: {} }, handlers: new Map([["tools/list", echo]]) }
        })
        assert.strictEqual(client.state.phase, "Ready")
        assert.strictEqual(client.state.revision?.version, "2026-07-28")
        assert.deepStrictEqual(client.state.peerInfo, SessionPair.testServerInfo)
        const result = yield* client.request("tools/list", { cursor: "x" })
        assert.deepStrictEqual((result as { echoed: { cursor: string } }).echoed.cursor, "x")
        assert.strictEqual(server.side, "server")
      })
    )
  }

  it.effect("negotiates a stateful revision when the client speaks only those", () =>
    Effect.gen(function* () {
      const { client, server } = yield* SessionPair.make({ client: { supportedVersions: ["2025-06-18"] } })
      assert.strictEqual(client.state.revision?.version, "2025-06-18")
      assert.strictEqual(server.state.revision?.version, "2025-06-18")
      assert.deepStrictEqual(server.state.peerInfo, SessionPair.testClientInfo)
    })
  )

  it.effect("handler errors reach the caller as typed McpErrors", () =>
    Effect.gen(function* () {
      const { client } = yield* SessionPair.make({
        server: {
          capabilities: { tools: {} },
          handlers: new Map([["tools/call", () => Effect.fail(new McpError.InvalidParams({ message: "bad tool" }))]])
        }
      })
      const error = yield* Effect.flip(client.request("tools/call", { name: "x" }))
      assert.strictEqual(error._tag, "InvalidParams")
    })
  )

  it.effect("faults on the client's end are applied and recorded", () =>
    Effect.gen(function* () {
      const pair = yield* Effect.forkChild(
        SessionPair.make({
          client: { supportedVersions: ["2025-11-25"] },
          faults: { outgoing: { delay: { duration: "300 millis" } } }
        })
      )
      yield* TestClock.adjust("299 millis")
      assert.isUndefined(pair.pollUnsafe(), "the handshake finished before the delayed initialize arrived")
      // The initialize request arrives; then notifications/initialized is delayed too.
      yield* TestClock.adjust("1 millis")
      yield* TestClock.adjust("300 millis")
      const { client, server, faultEvents } = yield* Fiber.join(pair)
      assert.strictEqual(client.state.phase, "Ready")
      const events = yield* faultEvents
      assert.deepStrictEqual(
        events.map((e) => [e.fault, e.index, e.at]),
        [
          ["delay", 0, 0],
          ["delay", 1, 300]
        ]
      )
      assert.isTrue(server.state.phase === "Initializing" || server.state.phase === "Ready")
    })
  )

  it.layer(
    SessionPair.layer({ server: { capabilities: { prompts: {} }, handlers: new Map([["prompts/list", echo]]) } })
  )("as a shared layer", (it) => {
    it.effect("serves requests", () =>
      Effect.gen(function* () {
        const { client } = yield* SessionPair.CurrentSessionPair
        const result = yield* client.request("prompts/list", { cursor: "c" })
        assert.strictEqual((result as { echoed: { cursor: string } }).echoed.cursor, "c")
      })
    )
  })
})
