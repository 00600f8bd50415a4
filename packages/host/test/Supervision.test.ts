/**
 * What a caller of the host sees while a server's connection changes: calls of every kind waiting within their
 * timeout, a loss seen by the host before its caller, a restart and the host's close said in the status.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as McpHost from "../src/McpHost.ts"
import { clientInfo, configOf, describeStatus, echoServer, memory, record, textOf } from "./fixtures.ts"

/** A tool that says it started, then never answers. */
const hanging = (started: Queue.Queue<void>) =>
  Tool.make("hang", {
    input: Schema.Struct({}),
    handler: () => Effect.andThen(Queue.offer(started, undefined), Effect.never)
  })

const reasonOf = (error: { readonly _tag: string }) =>
  error._tag === "HostError" ? (error as unknown as { readonly reason: string }).reason : error._tag

describe("McpHost supervision", () => {
  it.effect("calls with progress and as a task wait for a connection no longer than their timeout", () =>
    Effect.gen(function* () {
      const servers = yield* memory({ a: echoServer("a") })
      const host = yield* McpHost.make({
        clientInfo,
        config: configOf("a"),
        callTimeout: "2 seconds",
        reconnect: McpHost.backoff({ base: "10 seconds" })
      }).pipe(Effect.provide(servers.connector))
      yield* host.awaitReady("a")
      const seen = yield* record(host)
      servers.down("a")
      yield* servers.crash("a")
      yield* seen.until((changes) => changes.some((c) => c.status._tag === "Degraded"))
      // Returns once both calls have come to rest, waiting for a connection.
      const calls = yield* McpTest.forkIdle(
        Effect.all(
          [
            Effect.flip(Stream.runDrain(host.callToolWithProgress("a__echo", { text: "late" }))),
            Effect.flip(Stream.runDrain(host.callToolAsTask("a__echo", { text: "late" })))
          ],
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("2 seconds")
      // Before, both waited for the reconnect schedule (the next attempt in 10 s, or until it gave up).
      const done = calls.pollUnsafe()
      assert.isDefined(done, "both calls ended with their timeout")
      const [progress, task] = yield* Fiber.join(calls)
      for (const error of [progress, task]) {
        assert.strictEqual(reasonOf(error), "Unavailable")
        assert.match(error.message, /no connection within 2s \(its last attempt: the server closed the connection\)$/)
      }
    })
  )

  it.effect("a call with progress waits for a turn no longer than its timeout", () =>
    Effect.gen(function* () {
      const started = yield* Queue.unbounded<void>()
      const servers = yield* memory({ a: echoServer("a", hanging(started)) })
      const host = yield* McpHost.make({ clientInfo, config: configOf("a"), concurrency: 1 }).pipe(
        Effect.provide(servers.connector)
      )
      yield* host.awaitReady("a")
      yield* Effect.forkScoped(host.callTool("a__hang", {}))
      yield* Queue.take(started)
      // Returns once the call has come to rest, waiting for the turn the hanging call holds.
      const call = yield* McpTest.forkIdle(
        Effect.flip(Stream.runDrain(host.callToolWithProgress("a__echo", { text: "x" }, { timeout: "1 second" })))
      )
      yield* TestClock.adjust("1 second")
      assert.isDefined(call.pollUnsafe(), "the call ended with its timeout")
      const error = yield* Fiber.join(call)
      assert.strictEqual(reasonOf(error), "Unavailable")
      assert.match(error.message, /no turn within 1s$/)
    })
  )

  it.effect("a call that failed with its connection reaches its caller once the host let go of that connection", () =>
    Effect.gen(function* () {
      const started = yield* Queue.unbounded<void>()
      const servers = yield* memory({ a: echoServer("a", hanging(started)) })
      const host = yield* McpHost.make({ clientInfo, config: configOf("a") }).pipe(Effect.provide(servers.connector))
      yield* host.awaitReady("a")
      const seen = yield* record(host)
      // What a caller that retries at once sees, all in one fiber: nothing runs between the failure and the next.
      const caller = yield* Effect.forkScoped(
        Effect.gen(function* () {
          const failure = yield* Effect.flip(host.callTool("a__hang", {}))
          const status = yield* host.status("a")
          yield* host.awaitReady("a")
          const attempts = servers.attempts.get("a")
          const again = yield* Effect.exit(host.callTool("a__echo", { text: "again" }))
          return { failure, status, attempts, again }
        })
      )
      yield* Queue.take(started)
      yield* servers.crash("a")
      yield* seen.until((changes) => changes.some((c) => c.status._tag === "Degraded"))
      // The reconnect's delay.
      yield* TestClock.adjust("500 millis")
      const { failure, status, attempts, again } = yield* Fiber.join(caller)
      assert.strictEqual(failure._tag, "SessionClosed")
      // Before, the status still said Ready, awaitReady returned the closed connection at once, and the call
      // was handed it and failed the same way.
      assert.strictEqual(describeStatus(status), "Degraded(500)")
      assert.strictEqual(attempts, 2, "awaitReady waited for the new connection")
      assert.isTrue(Exit.isSuccess(again))
      assert.strictEqual(Exit.isSuccess(again) ? textOf(again.value) : "", "a: again")
    })
  )

  it.effect("restart says Connecting as it begins, while the old connection closes; calls wait for the new one", () =>
    Effect.gen(function* () {
      let closes = 0
      const closing = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // Each connection's close waits for the test, as stopping a process that ignores its stdin's end does.
      const servers = yield* memory(
        { a: echoServer("a") },
        {
          closing: Effect.suspend(() =>
            ++closes === 1 ? Effect.andThen(Deferred.succeed(closing, undefined), Deferred.await(release)) : Effect.void
          )
        }
      )
      const host = yield* McpHost.make({ clientInfo, config: configOf("a") }).pipe(Effect.provide(servers.connector))
      yield* host.awaitReady("a")
      const seen = yield* record(host)
      yield* host.restart("a")
      yield* Deferred.await(closing)
      const call = yield* Effect.gen(function* () {
        // Before, Ready (with the stopped process) until the old connection had closed.
        assert.strictEqual(describeStatus(yield* host.status("a")), "Connecting(1)")
        // Returns once the call has come to rest, waiting for the new connection.
        const call = yield* McpTest.forkIdle(host.callTool("a__echo", { text: "new" }, { timeout: "5 seconds" }))
        assert.isUndefined(call.pollUnsafe())
        return call
      }).pipe(Effect.ensuring(Deferred.succeed(release, undefined)))
      assert.strictEqual(textOf(yield* Fiber.join(call)), "a: new")
      assert.deepStrictEqual(
        seen.map((c) => describeStatus(c.status)),
        ["Ready", "Connecting(1)", "Ready"]
      )
    })
  )

  it.effect("closing the host fails whoever waits for a server; every server is then Failed", () =>
    Effect.gen(function* () {
      const servers = yield* memory({ a: echoServer("a"), b: echoServer("b") }, { failFirst: { b: 100 } })
      const scope = yield* Scope.make()
      const host = yield* McpHost.make({
        clientInfo,
        config: configOf("a", "b"),
        reconnect: McpHost.backoff({ base: "10 seconds" })
      }).pipe(Effect.provide(servers.connector), Scope.provide(scope))
      yield* host.awaitReady("a")
      // Returns once both have come to rest, waiting for b (which keeps refusing).
      const waiting = yield* McpTest.forkIdle(
        Effect.all([Effect.flip(host.awaitReady("b")), Effect.flip(host.client("b"))], { concurrency: "unbounded" })
      )
      assert.isUndefined(waiting.pollUnsafe())
      yield* McpTest.runIdle(Scope.close(scope, Exit.void))
      // Before, both waited for good, and a was still Ready.
      assert.isDefined(waiting.pollUnsafe(), "the waiters ended with the host")
      for (const error of yield* Fiber.join(waiting)) {
        assert.strictEqual(error.reason, "Unavailable")
        assert.strictEqual(error.message, 'server "b" is unavailable: the host was closed')
      }
      for (const name of ["a", "b"]) {
        const status = yield* host.status(name)
        assert.strictEqual(status._tag === "Failed" ? status.failure.message : status._tag, "the host was closed")
      }
      const late = yield* Effect.flip(host.awaitReady("a"))
      assert.strictEqual(late.message, 'server "a" is unavailable: the host was closed')
      // A closed host's servers offer nothing.
      assert.deepStrictEqual(yield* host.tools, [])
    })
  )

  it.effect("closing the host while a lost connection is still closing fails its waiters and other calls at once", () =>
    Effect.gen(function* () {
      const started = yield* Queue.unbounded<void>()
      let hold = false
      const closing = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // The first close after `hold` (b's lost connection) waits for the test, as stopping a stdio server that
      // ignores its stdin's end and SIGTERM takes both of the transport's graces; the others close at once.
      const servers = yield* memory(
        { a: echoServer("a", hanging(started)), b: echoServer("b") },
        {
          closing: Effect.suspend(() => {
            if (!hold) return Effect.void
            hold = false
            return Effect.andThen(Deferred.succeed(closing, undefined), Deferred.await(release))
          })
        }
      )
      const scope = yield* Scope.make()
      const host = yield* McpHost.make({ clientInfo, config: configOf("a", "b") }).pipe(
        Effect.provide(servers.connector),
        Scope.provide(scope)
      )
      yield* Effect.all([host.awaitReady("a"), host.awaitReady("b")])
      const seen = yield* record(host)
      // A call in flight on the healthy server a.
      const call = yield* Effect.forkChild(Effect.flip(host.callTool("a__hang", {})))
      yield* Queue.take(started)
      hold = true
      yield* servers.crash("b")
      yield* seen.until((changes) => changes.some((c) => c.server === "b" && c.status._tag === "Degraded"))
      // b is between attempts (the next in 500 ms of virtual time), its lost connection still closing.
      yield* Deferred.await(closing)
      const waiter = yield* McpTest.forkIdle(Effect.flip(host.awaitReady("b")))
      assert.isUndefined(waiter.pollUnsafe())
      // Returns once the close, and all it set going, has come to rest: held up in b's connection's close.
      const closed = yield* McpTest.forkIdle(Scope.close(scope, Exit.void))
      yield* Effect.gen(function* () {
        // Before, b's supervisor waited for that close before saying Failed: b's waiter still waited, and a's
        // connection (its call in flight) was closed only after it.
        assert.isUndefined(closed.pollUnsafe(), "the close waits for b's connection to close")
        assert.isDefined(waiter.pollUnsafe(), "b's waiter failed as the close began")
        assert.isDefined(call.pollUnsafe(), "a's call in flight failed as the close began")
        for (const name of ["a", "b"]) {
          const status = yield* host.status(name)
          assert.strictEqual(status._tag === "Failed" ? status.failure.message : status._tag, "the host was closed")
        }
      }).pipe(Effect.ensuring(Deferred.succeed(release, undefined)))
      const error = yield* Fiber.join(waiter)
      assert.strictEqual(error.reason, "Unavailable")
      assert.strictEqual(error.message, 'server "b" is unavailable: the host was closed')
      assert.strictEqual((yield* Fiber.join(call))._tag, "SessionClosed")
      yield* Fiber.join(closed)
      // Returns once every woken timer, and all it set going, has come to rest: nothing connects again.
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual([servers.attempts.get("a"), servers.attempts.get("b")], [1, 1])
    })
  )

  it.effect(
    "closing the host while a restart's old connection is still closing fails the server's waiters at once",
    () =>
      Effect.gen(function* () {
        let closes = 0
        const closing = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // The first connection's close waits for the test.
        const servers = yield* memory(
          { a: echoServer("a") },
          {
            closing: Effect.suspend(() =>
              ++closes === 1
                ? Effect.andThen(Deferred.succeed(closing, undefined), Deferred.await(release))
                : Effect.void
            )
          }
        )
        const scope = yield* Scope.make()
        const host = yield* McpHost.make({ clientInfo, config: configOf("a") }).pipe(
          Effect.provide(servers.connector),
          Scope.provide(scope)
        )
        yield* host.awaitReady("a")
        yield* host.restart("a")
        yield* Deferred.await(closing)
        const waiter = yield* McpTest.forkIdle(Effect.flip(host.awaitReady("a")))
        assert.isUndefined(waiter.pollUnsafe())
        const closed = yield* McpTest.forkIdle(Scope.close(scope, Exit.void))
        yield* Effect.gen(function* () {
          // Before, the supervisor finished the old connection's close first: the waiter still waited, a Connecting.
          assert.isUndefined(closed.pollUnsafe(), "the close waits for the old connection to close")
          assert.isDefined(waiter.pollUnsafe(), "the waiter failed as the close began")
          const status = yield* host.status("a")
          assert.strictEqual(status._tag === "Failed" ? status.failure.message : status._tag, "the host was closed")
        }).pipe(Effect.ensuring(Deferred.succeed(release, undefined)))
        assert.strictEqual((yield* Fiber.join(waiter)).message, 'server "a" is unavailable: the host was closed')
        yield* Fiber.join(closed)
        assert.strictEqual(servers.attempts.get("a"), 1, "nothing connected again")
      })
  )

  it.effect("a server's catalog names do not depend on which other servers are connected", () =>
    Effect.gen(function* () {
      // Both names make the prefix svc_one; the one listed first connects last.
      const servers = yield* memory(
        { "svc one": echoServer("svc one"), svc_one: echoServer("svc_one") },
        { failFirst: { "svc one": 1 } }
      )
      const host = yield* McpHost.make({
        clientInfo,
        config: configOf("svc one", "svc_one"),
        reconnect: McpHost.backoff({ base: "1 second" })
      }).pipe(Effect.provide(servers.connector))
      yield* host.awaitReady("svc_one")
      const before = (yield* host.tools).map((t) => t.name)
      yield* TestClock.adjust("1 second")
      yield* host.awaitReady("svc one")
      const after = (yield* host.tools).map((t) => t.name)
      // Before, svc_one's echo was svc_one__echo alone, then svc_one__echo_2 once svc one came: the name it
      // had went to the other server.
      assert.deepStrictEqual(before, ["svc_one__echo"])
      assert.deepStrictEqual(after, ["svc_one_2__echo", "svc_one__echo"])
      assert.strictEqual(textOf(yield* host.callTool("svc_one__echo", { text: "hi" })), "svc_one: hi")
      assert.strictEqual(textOf(yield* host.callTool("svc_one_2__echo", { text: "hi" })), "svc one: hi")
    })
  )
})
