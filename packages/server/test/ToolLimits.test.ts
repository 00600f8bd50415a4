/**
 * ToolLimits: token buckets and concurrency counts per caller and per tool,
 * on the TestClock, over in-memory sessions of principals.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as ToolLimits from "@effect-mcp/server/ToolLimits"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { testServer } from "./fixtures.ts"

const principal = (owner: string): Transport.Authenticated => ({ owner, scopes: [], value: undefined })

/** A server with `echo`, `other` and `hold` (says it started on `started`, then waits for `release`). */
const serve = (options: ToolLimits.Options) =>
  Effect.gen(function* () {
    const started = yield* Queue.unbounded<string>()
    const release = yield* Deferred.make<void>()
    const features = Tool.layer(
      Tool.make("echo", { input: Schema.Struct({}), handler: () => Effect.succeed("echo") }),
      Tool.make("other", { input: Schema.Struct({}), handler: () => Effect.succeed("other") }),
      Tool.make("hold", {
        input: Schema.Struct({}),
        handler: () => Effect.andThen(Queue.offer(started, "hold"), Effect.as(Deferred.await(release), "held"))
      })
    )
    const context = yield* Layer.build(testServer(Layer.merge(features, ToolLimits.layer(options))))
    const connect = (owner: string) =>
      McpTest.makeClientFor(
        McpServer.makeSession.pipe(
          Effect.updateService(Transport.Transport, (transport) => ({
            ...transport,
            principal: () => principal(owner)
          }))
        ),
        { revision: "2025-11-25" }
      ).pipe(Effect.provideContext(context))
    return { connect, started, release }
  })

const errorOf = (error: unknown) => error as { readonly code: number; readonly message: string; readonly data: unknown }

describe("ToolLimits", () => {
  it.effect("a bucket per caller and tool: one tool spent leaves the others and other callers alone", () =>
    Effect.gen(function* () {
      const { connect } = yield* serve({
        perTool: { rate: { capacity: 1, refillEvery: "1 second" } },
        tools: { other: { rate: { capacity: 2, refillEvery: "1 second" } } }
      })
      const alice = yield* connect("alice")
      const bob = yield* connect("bob")
      yield* alice.callTool("echo", {})
      const refused = errorOf(yield* Effect.flip(alice.callTool("echo", {})))
      assert.deepStrictEqual([refused.code, refused.data], [-32029, { retryAfterMs: 1000 }])
      // `other` has a bucket of its own (of 2), and Bob buckets of his.
      yield* alice.callTool("other", {})
      yield* alice.callTool("other", {})
      assert.strictEqual(errorOf(yield* Effect.flip(alice.callTool("other", {}))).code, -32029)
      yield* bob.callTool("echo", {})
      yield* TestClock.adjust("1 second")
      yield* alice.callTool("echo", {})
    })
  )

  it.effect("a bucket per caller counts every tool; a refused call takes nothing from the tool's", () =>
    Effect.gen(function* () {
      const { connect } = yield* serve({
        perCaller: { rate: { capacity: 2, refillEvery: "1 minute" } },
        perTool: { rate: { capacity: 2, refillEvery: "1 minute" } }
      })
      const alice = yield* connect("alice")
      yield* alice.callTool("echo", {})
      yield* alice.callTool("other", {})
      assert.strictEqual(errorOf(yield* Effect.flip(alice.callTool("echo", {}))).code, -32029)
      yield* TestClock.adjust("1 minute")
      // The refused call took no token of echo's bucket: one of its two is left, and the refill gave one more.
      yield* alice.callTool("echo", {})
    })
  )

  it.effect("concurrency per caller and tool: a call over the limit is refused, not queued", () =>
    Effect.gen(function* () {
      const { connect, started, release } = yield* serve({
        perCaller: { concurrency: 2 },
        tools: { hold: { concurrency: 1 } }
      })
      const alice = yield* connect("alice")
      const bob = yield* connect("bob")
      const first = yield* Effect.forkChild(alice.callTool("hold", {}))
      assert.strictEqual(yield* Queue.take(started), "hold")
      const refused = errorOf(yield* Effect.flip(alice.callTool("hold", {})))
      assert.deepStrictEqual(
        [refused.code, refused.message, refused.data],
        [ToolLimits.Code.TooManyConcurrent, "Too many concurrent calls", { maxConcurrent: 1 }]
      )
      // Another tool passes (2 per caller); Bob's hold is his own.
      yield* alice.callTool("echo", {})
      const second = yield* Effect.forkChild(bob.callTool("hold", {}))
      assert.strictEqual(yield* Queue.take(started), "hold")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      // Ended calls give their places back.
      yield* alice.callTool("hold", {})
    })
  )
})
