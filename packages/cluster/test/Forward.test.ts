/**
 * The owner's side of `Locate` through effect/cluster's in-memory entity
 * client, and what of a client's request an exchange carries. (What a
 * receiving process answers for a lost owner is `@effect-mcp/http`'s
 * LostAnswers, tested there.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as Entity from "effect/cluster/Entity"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as TestClock from "effect/testing/TestClock"
import * as DirectHop from "../src/DirectHop.ts"
import * as Forward from "../src/internal/forward.ts"
import * as NodeHop from "../src/internal/nodeHop.ts"

describe("locating a session's owner", () => {
  it.effect("Locate answers the owner's hop target and runs nothing of the session", () =>
    Effect.gen(function* () {
      const via = DirectHop.encodeTarget({ origin: "http://10.0.0.5:3000", secret: "k" })
      const make = yield* Entity.makeTestClient(
        Forward.McpSession,
        Forward.McpSession.toLayer(Effect.succeed(Forward.located(via)))
      )
      // Any session of the shard: the answer names the process, not the session.
      for (const id of ["s1", "s2"]) {
        const client = yield* make(id)
        assert.deepStrictEqual(yield* client.Locate(), { via })
        assert.deepStrictEqual(DirectHop.decodeTarget((yield* client.Locate()).via), {
          origin: "http://10.0.0.5:3000",
          secret: "k"
        })
      }
    }).pipe(Effect.scoped, Effect.provide(ShardingConfig.layer()))
  )

  it.effect("a refused Locate (shards moving) is asked again until the owner answers, within the bound", () =>
    Effect.gen(function* () {
      let asked = 0
      // Refused twice (the shard not yet assigned where it was sent), then answered.
      const locate = Effect.suspend(() =>
        ++asked <= 2 ? Effect.fail("not assigned" as const) : Effect.succeed({ via: "owner" })
      )
      const fiber = yield* Effect.forkChild(Forward.locateWithin(locate, Duration.seconds(60)))
      yield* TestClock.adjust("20 millis")
      yield* TestClock.adjust("40 millis")
      assert.deepStrictEqual(yield* Fiber.join(fiber), { via: "owner" })
      assert.strictEqual(asked, 3)

      // Refused for as long as the bound: the bound's error, after some attempts spaced at most a second apart.
      let refused = 0
      const never = Effect.suspend(() => {
        refused++
        return Effect.fail("not assigned" as const)
      })
      const bounded = yield* Effect.forkChild(Forward.locateWithin(never, Duration.seconds(5)))
      yield* TestClock.adjust("5 seconds")
      const exit = yield* Fiber.await(bounded)
      assert.isTrue(Exit.isFailure(exit))
      assert.isAtLeast(refused, 6)
      assert.isAtMost(refused, 12)
    })
  )

  it("never carries the headers one runner sets for another from a client's request", () => {
    const request = HttpServerRequest.fromWeb(
      new Request("http://h/mcp?q=1", {
        method: "POST",
        headers: {
          "mcp-session-id": "s1",
          [Forward.HEADER_NEW_SESSION]: "chosen",
          [Forward.HEADER_CLIENT]: "10.0.0.1",
          [DirectHop.HEADER_SECRET]: "guess"
        }
      })
    )
    const client = Forward.toExchange(request, "{}", undefined)
    assert.deepStrictEqual(
      Object.keys(client.headers).filter((name) => name.startsWith("x-effect-mcp")),
      []
    )
    assert.deepStrictEqual([client.method, client.url, client.body], ["POST", "/mcp?q=1", "{}"])
    assert.strictEqual(client.headers["mcp-session-id"], "s1")
    // What the receiving process itself says goes with the exchange, beside the client's headers.
    const opening = Forward.toExchange(request, "{}", { [Forward.HEADER_NEW_SESSION]: "picked" })
    assert.deepStrictEqual(opening.said, { [Forward.HEADER_NEW_SESSION]: "picked" })
    assert.isUndefined(opening.headers[Forward.HEADER_NEW_SESSION])
    // The same for Node's parsed headers (the relay's, which the hop copies once): private ones dropped,
    // repeated ones joined, the length left to the hop's frames (its secret goes once per connection).
    assert.deepStrictEqual(
      NodeHop.hopHeaders({
        accept: ["application/json", "text/event-stream"],
        [Forward.HEADER_CLIENT]: "10.0.0.1",
        [DirectHop.HEADER_SECRET]: "guess",
        "content-length": "99",
        missing: undefined
      }),
      { accept: "application/json, text/event-stream" }
    )
    // What the receiving process says is carried, whatever the client sent under the same names.
    assert.deepStrictEqual(
      NodeHop.hopHeaders(
        { accept: "application/json", [Forward.HEADER_NEW_SESSION]: "chosen", [Forward.HEADER_CLIENT]: "10.0.0.1" },
        { [Forward.HEADER_NEW_SESSION]: "picked", [Forward.HEADER_CLIENT]: "192.0.2.7" }
      ),
      { accept: "application/json", [Forward.HEADER_NEW_SESSION]: "picked", [Forward.HEADER_CLIENT]: "192.0.2.7" }
    )
  })
})
