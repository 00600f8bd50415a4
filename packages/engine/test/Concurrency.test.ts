import { assert, describe, it } from "@effect/vitest"
import type * as Session from "@effect-mcp/engine/Session"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { forkIdle, linked } from "./fixtures.ts"

describe("concurrency", () => {
  it.effect("10,000 concurrent calls each get exactly one response and the cap of 8 running handlers holds", () =>
    Effect.gen(function* () {
      let running = 0
      let maxRunning = 0
      let served = 0
      const handler: Session.Handler = (params) =>
        Effect.gen(function* () {
          running++
          maxRunning = Math.max(maxRunning, running)
          yield* Effect.sleep("10 millis")
          running--
          served++
          return { content: [{ type: "text", text: String((params as { arguments: { n: number } }).arguments.n) }] }
        })
      const { client } = yield* linked({
        server: {
          capabilities: { tools: {} },
          handlers: new Map([["tools/call", handler]]),
          peer: { maxConcurrentRequests: 8 }
        },
        client: { peer: { requestTimeout: "1 hour" } }
      })
      const n = 10_000
      // Returns once every request is sent and the first 8 handlers are sleeping (the rest wait for a turn).
      const fiber = yield* forkIdle(
        Effect.forEach(
          Array.from({ length: n }, (_, i) => i),
          (i) => client.request("tools/call", { name: "echo", arguments: { n: i } }),
          { concurrency: "unbounded" }
        )
      )
      // 10,000 handlers of 10 ms, 8 at a time: 12.5 s of virtual time, in one adjust. It wakes the due sleeps
      // in order and waits, after each, for what it set going (answers sent, the next handlers asleep) to rest.
      yield* TestClock.adjust("12500 millis")
      assert.isDefined(fiber.pollUnsafe(), "every call answered within 12.5 s of virtual time")
      const results = (yield* Fiber.join(fiber)) as ReadonlyArray<{ content: ReadonlyArray<{ text: string }> }>
      assert.strictEqual(results.length, n)
      for (const [i, r] of results.entries()) assert.strictEqual(r.content[0]?.text, String(i))
      assert.strictEqual(served, n)
      assert.strictEqual(maxRunning, 8)
    })
  )

  it.effect("a ping, and a request refused at once, are answered while the limit's one handler works", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // A stateful revision: 2026-07-28 has no ping.
      const { client } = yield* linked({
        clientVersions: ["2025-11-25"],
        server: {
          capabilities: { tools: {} },
          handlers: new Map<string, Session.Handler>([
            [
              "tools/call",
              () =>
                Effect.andThen(
                  Deferred.succeed(started, undefined),
                  Effect.as(Deferred.await(release), { content: [] })
                )
            ]
          ]),
          peer: { maxConcurrentRequests: 1 }
        }
      })
      const call = yield* Effect.forkChild(client.request("tools/call", { name: "long", arguments: {} }))
      yield* Deferred.await(started)
      // Answered with no time passing, the handler still at work: before, both waited for its permit.
      const ping = yield* forkIdle(client.request("ping"))
      assert.isDefined(ping.pollUnsafe(), "the ping was answered while the handler works")
      yield* Fiber.join(ping)
      const refused = yield* forkIdle(Effect.flip(client.request("tools/call", { name: 7 })))
      assert.isDefined(refused.pollUnsafe(), "the invalid params were refused while the handler works")
      assert.strictEqual(((yield* Fiber.join(refused)) as McpError.McpError)._tag, "InvalidParams")
      assert.isUndefined(call.pollUnsafe())
      yield* Deferred.succeed(release, undefined)
      assert.deepStrictEqual(yield* Fiber.join(call), { content: [] })
    })
  )
})
