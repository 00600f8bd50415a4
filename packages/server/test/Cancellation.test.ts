import { assert, describe, it } from "@effect/vitest"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

const slowTool = (started: Deferred.Deferred<void>, finalized: Deferred.Deferred<void>) =>
  Tool.make("slow", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.acquireRelease(Deferred.succeed(started, undefined), () => Deferred.succeed(finalized, undefined)).pipe(
        Effect.andThen(Effect.never),
        Effect.scoped
      )
  })

const steps = Tool.make("steps", {
  input: Schema.Struct({ n: Schema.Int }),
  handler: ({ n }) =>
    Effect.gen(function* () {
      for (let i = 1; i <= n; i++) {
        yield* Effect.sleep("1 second")
        yield* ServerRequest.progress({ progress: i, total: n, message: `step ${i}` })
      }
      return `did ${n}`
    })
})

describe("cancellation and progress", () => {
  for (const version of revisions) {
    it.effect(`${version}: cancelling a tool call interrupts its handler and runs its finalizer`, () =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const finalized = yield* Deferred.make<void>()
        const { session: client } = yield* McpTest.connectRaw(testServer(Tool.layer(slowTool(started, finalized))), {
          revision: version
        })
        const call = yield* client.request("tools/call", { name: "slow", arguments: {} }).pipe(Effect.forkChild)
        yield* Deferred.await(started)
        assert.strictEqual(yield* Deferred.isDone(finalized), false)
        yield* Fiber.interrupt(call)
        yield* Deferred.await(finalized)
      })
    )

    it.effect(`${version}: with every ask capability declared, cancelling still interrupts the handler`, () =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const finalized = yield* Deferred.make<void>()
        const { session: client } = yield* McpTest.connectRaw(testServer(Tool.layer(slowTool(started, finalized))), {
          revision: version,
          capabilities: { sampling: {}, elicitation: {}, roots: {} }
        })
        const call = yield* client.request("tools/call", { name: "slow", arguments: {} }).pipe(Effect.forkChild)
        yield* Deferred.await(started)
        assert.strictEqual(yield* Deferred.isDone(finalized), false)
        yield* Fiber.interrupt(call)
        yield* Deferred.await(finalized)
      })
    )

    it.effect(`${version}: a cancelled handler that logged stops, finalizer run, and the session serves on`, () =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const finalized = yield* Deferred.make<void>()
        const chatty = Tool.make("chatty", {
          input: Schema.Struct({}),
          handler: () =>
            Effect.gen(function* () {
              yield* Effect.addFinalizer(() => Deferred.succeed(finalized, undefined))
              for (let i = 0; i < 5; i++) yield* ServerRequest.log("warning", `line ${i}`)
              yield* Deferred.succeed(started, undefined)
              return yield* Effect.never
            }).pipe(Effect.scoped)
        })
        const echo = Tool.make("echo", {
          input: Schema.Struct({ text: Schema.String }),
          handler: ({ text }) => Effect.as(ServerRequest.log("warning", "echoing"), text)
        })
        const { session: client, request } = yield* McpTest.connectRaw(testServer(Tool.layer(chatty, echo)), {
          revision: version
        })
        const call = yield* client.request("tools/call", { name: "chatty", arguments: {} }).pipe(Effect.forkChild)
        yield* Deferred.await(started)
        yield* Fiber.interrupt(call)
        yield* Deferred.await(finalized)
        const answer = (yield* request("tools/call", { name: "echo", arguments: { text: "still here" } })) as Obj
        assert.deepStrictEqual(answer.content, [{ type: "text", text: "still here" }])
      })
    )

    it.effect(`${version}: progress from a handler reaches the caller, then the result`, () =>
      Effect.gen(function* () {
        const { session: client } = yield* McpTest.connectRaw(testServer(Tool.layer(steps)), { revision: version })
        const fiber = yield* client
          .requestWithProgress("tools/call", { name: "steps", arguments: { n: 3 } })
          .pipe(Stream.runCollect, Effect.forkChild)
        for (let i = 0; i < 50 && fiber.pollUnsafe() === undefined; i++) yield* TestClock.adjust("500 millis")
        const events = (yield* Fiber.join(fiber)) as ReadonlyArray<Obj>
        assert.deepStrictEqual(
          events.slice(0, 3).map((e) => e.update.progress),
          [1, 2, 3]
        )
        assert.strictEqual(events[3]!._tag, "Result")
        assert.deepStrictEqual(events[3]!.value.content, [{ type: "text", text: "did 3" }])
      })
    )
  }
})
