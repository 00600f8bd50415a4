import { assert, describe, it } from "@effect/vitest"
import type * as Session from "@effect-mcp/engine/Session"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import { linked } from "./fixtures.ts"

describe("closing a session", () => {
  it.effect("interrupts 100 in-flight handlers, runs every finalizer and fails pending calls with SessionClosed", () =>
    Effect.gen(function* () {
      let started = 0
      let finalized = 0
      const allStarted = yield* Deferred.make<void>()
      const handler: Session.Handler = () =>
        Effect.gen(function* () {
          yield* Effect.addFinalizer(() => Effect.sync(() => finalized++))
          started++
          if (started === 100) yield* Deferred.succeed(allStarted, undefined)
          return yield* Effect.never
        }).pipe(Effect.scoped)
      const serverScope = yield* Scope.make()
      const { client, server } = yield* linked({
        server: { capabilities: { tools: {} }, handlers: new Map([["tools/call", handler]]) }
      }).pipe(Scope.provide(serverScope))
      const calls = yield* Effect.forEach(
        Array.from({ length: 100 }, (_, i) => i),
        (i) => client.request("tools/call", { name: "x", arguments: { i } }).pipe(Effect.exit, Effect.forkChild)
      )
      yield* Deferred.await(allStarted)
      assert.strictEqual(started, 100)
      assert.strictEqual(server.peer.inFlight(), 100, `in flight ${server.peer.inFlight()}`)
      yield* Scope.close(serverScope, Exit.void)
      assert.strictEqual(finalized, 100)
      assert.strictEqual(server.peer.inFlight(), 0)
      const exits = yield* Fiber.joinAll(calls)
      for (const exit of exits) {
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = exit.cause.reasons[0]
          assert.strictEqual(error?._tag, "Fail")
          if (error?._tag === "Fail") assert.strictEqual(error.error._tag, "SessionClosed")
        }
      }
      const closed = yield* client.closed
      assert.isTrue(Exit.isSuccess(closed))
    })
  )

  it.effect("transport end-of-stream closes the session and fails later calls without sending", () =>
    Effect.gen(function* () {
      const { client, serverEnd } = yield* linked({ clientVersions: ["2025-11-25"] })
      yield* serverEnd.close
      yield* client.closed
      const error = yield* Effect.flip(client.request("ping"))
      assert.strictEqual(error._tag, "SessionClosed")
    })
  )

  it.effect("onClose hooks run once when the session's scope closes, or at once once closed", () =>
    Effect.gen(function* () {
      const serverScope = yield* Scope.make()
      const { server } = yield* linked({}).pipe(Scope.provide(serverScope))
      const calls: Array<string> = []
      server.peer.onClose(() => calls.push("first"))
      server.peer.onClose(() => calls.push("second"))
      assert.deepStrictEqual(calls, [])
      yield* Scope.close(serverScope, Exit.void)
      assert.deepStrictEqual(calls, ["first", "second"])
      // Closed already: at once, and the earlier hooks do not run again.
      server.peer.onClose(() => calls.push("late"))
      assert.deepStrictEqual(calls, ["first", "second", "late"])
    })
  )

  it.effect("onClose hooks run when the transport ends", () =>
    Effect.gen(function* () {
      const { client, serverEnd } = yield* linked({ clientVersions: ["2025-11-25"] })
      let closed = 0
      client.peer.onClose(() => closed++)
      yield* serverEnd.close
      yield* client.closed
      assert.strictEqual(closed, 1)
    })
  )
})
