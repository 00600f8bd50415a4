/**
 * The gateway starting beside an upstream that never answers, in memory on
 * the TestClock: it is built (so served) at once, and its answers, the
 * handshake included, wait for the upstreams' first connections for
 * `awaitUpstreams` only.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Gateway from "../src/Gateway.ts"
import { memory } from "./memoryConnector.ts"

const config: McpConfig.Config = { mcpServers: { up: { command: "up" }, silent: { command: "silent" } } }

const upstream = Tool.layer(
  Tool.make("echo", { input: Schema.Struct({ text: Schema.String }), handler: ({ text }) => Effect.succeed(text) })
).pipe(Layer.provideMerge(McpServer.layer({ name: "up", version: "1.0.0" })))

/** The gateway over "up" and "silent" (which never answers), built: it must not wait for "silent". */
const gateway = (options: Partial<Gateway.Options>) =>
  Effect.gen(function* () {
    const up = yield* Layer.build(upstream)
    const context = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config,
        healthCheck: false,
        startTimeout: "4 seconds",
        ...options
      }).pipe(Layer.provide(memory({ up }, ["silent"])))
    )
    // "up" answers in memory, with no time passing: it is ready before the clock moves.
    yield* Context.get(context, McpHost.McpHost).awaitReady("up")
    return context
  })

const toolNames = (client: McpClient.McpClientShape) =>
  Effect.map(Stream.runCollect(client.tools), (tools) => tools.map((t) => t.name))

describe("Gateway starting", () => {
  it.effect(
    "serves at once; the handshake and lists wait for the upstreams until awaitUpstreams, then list those there",
    () =>
      Effect.gen(function* () {
        // Built with the TestClock still at 0: the Layer no longer waits for the upstreams.
        const context = yield* gateway({ awaitUpstreams: "3 seconds" })
        const stateful = yield* McpTest.makeClient({ revision: "2025-11-25" }).pipe(
          Effect.provideContext(context),
          Effect.flatMap(toolNames),
          Effect.forkChild
        )
        const stateless = yield* McpTest.makeClient({ revision: "2026-07-28" }).pipe(
          Effect.provideContext(context),
          Effect.flatMap(toolNames),
          Effect.forkChild
        )
        yield* TestClock.adjust("2999 millis")
        assert.isUndefined(stateful.pollUnsafe(), "the handshake waits for the upstreams")
        assert.isUndefined(stateless.pollUnsafe(), "server/discover waits for the upstreams")
        yield* TestClock.adjust("1 millis")
        // "silent" is still connecting (its start timeout is 4 s): the clients are answered with what is there.
        assert.deepStrictEqual(yield* Fiber.join(stateful), ["up__echo"])
        assert.deepStrictEqual(yield* Fiber.join(stateless), ["up__echo"])
      })
  )

  it.effect("by default waits for the start timeout (at most 10 s); awaitUpstreams 0 waits for none", () =>
    Effect.gen(function* () {
      const waiting = yield* gateway({})
      const first = yield* McpTest.makeClient({ revision: "2025-11-25" }).pipe(
        Effect.provideContext(waiting),
        Effect.flatMap(toolNames),
        Effect.forkChild
      )
      yield* TestClock.adjust("3999 millis")
      assert.isUndefined(first.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.join(first), ["up__echo"])
      // Later clients are answered at once.
      const later = yield* McpTest.makeClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(waiting))
      assert.deepStrictEqual(yield* toolNames(later), ["up__echo"])

      const eager = yield* gateway({ awaitUpstreams: 0 })
      const client = yield* McpTest.makeClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(eager))
      assert.strictEqual(client.serverInfo?.name, "gateway")
    })
  )
})
