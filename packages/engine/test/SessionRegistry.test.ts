/**
 * The engine's SessionRegistry on the TestClock, with a fake `Held` per
 * session: admission within the limit and the per-client quota, a session
 * bound to its principal, closing for a reason (ended once, the change
 * kept), idle expiry that waits for a busy session, and the stall watch with
 * its keepalives.
 */
import * as SessionRegistry from "@effect-mcp/engine/SessionRegistry"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"

class Fake implements SessionRegistry.Held {
  readonly client: string | undefined
  readonly owner: string | undefined
  busy = false
  activeAt = 0
  ended: Array<SessionRegistry.CloseReason> = []
  watched: Array<boolean> = []
  /** Connections each watch closes. */
  closes = 0
  /** Whether the whole session stalled (a transport whose session is its one connection). */
  stalledWhole = false
  constructor(client?: string, principal?: string) {
    this.client = client
    this.owner = principal
  }
  isBusy() {
    return this.busy
  }
  idleFor(now: number) {
    return now - this.activeAt
  }
  watch(keepalive: boolean) {
    this.watched.push(keepalive)
    return Effect.succeed(this.closes)
  }
  stalled() {
    return this.stalledWhole
  }
  end(reason: SessionRegistry.CloseReason) {
    return Effect.sync(() => void this.ended.push(reason))
  }
}

const options: SessionRegistry.Options = {
  maxSessions: 3,
  maxSessionsPerClient: 2,
  idleTimeout: "1 minute",
  watchEvery: "10 seconds",
  keepaliveEvery: "20 seconds"
}

describe("SessionRegistry", () => {
  it.effect("admits within the limit and each client's quota; finds a session for its principal only", () =>
    Effect.gen(function* () {
      let count = 0
      const registry = yield* SessionRegistry.make<Fake>({
        ...options,
        onCount: (delta) => {
          count += delta
        }
      })
      assert.isUndefined(registry.admit("a"))
      registry.add("s1", new Fake("a", "alice"))
      registry.add("s2", new Fake("a"))
      assert.deepStrictEqual(registry.admit("a"), { _tag: "OverQuota", limit: 2 })
      assert.isUndefined(registry.admit("b"))
      registry.add("s3", new Fake("b"))
      assert.deepStrictEqual(registry.admit("c"), { _tag: "Full" })
      assert.strictEqual(count, 3)
      assert.isDefined(registry.find("s1", "alice"))
      assert.isUndefined(registry.find("s1", "mallory"), "another principal's session is unknown")
      assert.isDefined(registry.find("s2"))
      assert.isTrue(yield* registry.close("s1", "Deleted"))
      assert.isFalse(yield* registry.close("s1", "Deleted"))
      assert.isUndefined(registry.admit("a"), "the quota counts open sessions only")
      assert.strictEqual(count, 2)
    })
  )

  it.effect("closing ends a session once and is a change with its reason; idle expiry waits for a busy one", () =>
    Effect.gen(function* () {
      const registry = yield* SessionRegistry.make<Fake>(options)
      const changes = yield* Queue.unbounded<SessionRegistry.SessionChange>()
      const stream = yield* registry.changeStream
      yield* Effect.forkScoped(Stream.runForEach(stream, (change) => Queue.offer(changes, change)))
      const idle = new Fake()
      const busy = new Fake()
      busy.busy = true
      registry.add("idle", idle)
      registry.add("busy", busy)
      yield* registry.runTimers
      yield* TestClock.adjust("61 seconds")
      assert.deepStrictEqual(yield* Queue.take(changes), { _tag: "Closed", sessionId: "idle", reason: "Expired" })
      assert.deepStrictEqual(idle.ended, ["Expired"])
      assert.isTrue(registry.has("busy"))
      busy.busy = false
      yield* TestClock.adjust("6 seconds")
      assert.deepStrictEqual(yield* Queue.take(changes), { _tag: "Closed", sessionId: "busy", reason: "Expired" })
      const kept = new Fake()
      registry.add("kept", kept)
      yield* registry.closeAll
      assert.deepStrictEqual(kept.ended, ["Shutdown"])
      assert.strictEqual(registry.size, 0)
    })
  )

  it.effect(
    "watches every session on its interval, with a keepalive at the keepalive interval; closes a stalled one",
    () =>
      Effect.gen(function* () {
        const stalled: Array<number> = []
        const registry = yield* SessionRegistry.make<Fake>({
          ...options,
          idleTimeout: Number.POSITIVE_INFINITY,
          onStalled: (n) => Effect.sync(() => void stalled.push(n))
        })
        const session = new Fake()
        session.closes = 1
        registry.add("s", session)
        yield* registry.runTimers
        yield* TestClock.adjust("40 seconds")
        assert.deepStrictEqual(session.watched, [false, true, false, true])
        assert.deepStrictEqual(stalled, [1, 1, 1, 1])
        assert.isTrue(registry.has("s"), "no idle expiry without an idle timeout")
        // A session that is its one connection, found stalled: closed, and counted with the stalled connections.
        session.closes = 0
        session.stalledWhole = true
        yield* TestClock.adjust("10 seconds")
        assert.isFalse(registry.has("s"))
        assert.deepStrictEqual(session.ended, ["Deleted"])
        assert.deepStrictEqual(stalled, [1, 1, 1, 1, 1])
      })
  )
})
