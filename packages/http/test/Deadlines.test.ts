/**
 * Every exchange has a deadline that covers the send: a server that accepts
 * a request and never answers (or never even takes the frame) fails the
 * handshake or the call on time, a notification it never takes fails at the
 * Peer's request timeout, and interrupting a call returns at once.
 * All on the TestClock: the HTTP server here is an HttpClient whose requests
 * never complete, the stdio-like one a transport whose `send` never returns.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { clientInfo } from "../../engine/test/fixtures.ts"
import { inMemoryClient, serverOptions, tools, URL_MCP } from "./StreamableHttpFixtures.ts"

/** An HTTP server that accepts every request and never answers it. */
const silentHttp = (onRequest: (request: HttpClientRequest.HttpClientRequest) => void = () => {}) =>
  HttpClient.make((request) =>
    Effect.andThen(
      Effect.sync(() => onRequest(request)),
      Effect.never
    )
  )

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  assert.isTrue(Exit.isFailure(exit), "failed")
  const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
  assert.isDefined(error, String(exit))
  return (error as { readonly error: E }).error
}

/**
 * A Streamable HTTP client transport to a server that answers every POST but those whose body holds `method`,
 * which it accepts and never answers.
 */
const stallingServer = (method: string) =>
  Effect.gen(function* () {
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make({ ...serverOptions(new Map([["tools/call", tools]])), capabilities: { tools: {} } })
    })
    const answering = inMemoryClient(server.handler)
    const stalled = yield* Deferred.make<void>()
    /** Completed when a stalled POST is given up on: its connection is dropped. */
    const dropped = yield* Deferred.make<void>()
    const http = HttpClient.transform(answering, (response, request) => {
      const body = request.body
      const text = body._tag === "Uint8Array" ? new TextDecoder().decode(body.body) : ""
      if (!text.includes(`"${method}"`)) return response
      return Effect.andThen(Deferred.succeed(stalled, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Deferred.succeed(dropped, undefined))
      )
    })
    const transport = yield* StreamableHttpClient.make({ url: URL_MCP }).pipe(
      Effect.provideService(HttpClient.HttpClient, http)
    )
    return { transport, stalled, dropped }
  })

/** A session with a server that answers everything but `tools/call`, whose POST it accepts and never answers. */
const stalledCalls = Effect.gen(function* () {
  const { transport, stalled, dropped } = yield* stallingServer("tools/call")
  const client = yield* ClientSession.make({
    clientInfo,
    capabilities: {},
    supportedVersions: ["2025-11-25"]
  }).pipe(Effect.provideService(Transport.Transport, transport))
  return { client, stalled, dropped }
})

/**
 * Starts a handshake with a deadline of 4 s over `transport` and, once `stalled` is done, checks that it is still
 * waiting just before the deadline and has failed at it: its error.
 */
const handshakeFailsAt4s = (transport: Transport.TransportShape, stalled: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    const fiber = yield* ClientSession.make({
      clientInfo,
      capabilities: {},
      supportedVersions: ["2025-11-25"],
      handshakeTimeout: "4 seconds"
    }).pipe(Effect.provideService(Transport.Transport, transport), Effect.exit, Effect.forkChild)
    yield* Deferred.await(stalled)
    yield* TestClock.adjust("3999 millis")
    assert.isUndefined(fiber.pollUnsafe(), "still waiting before the deadline")
    yield* TestClock.adjust("1 millis")
    return failureOf(yield* Fiber.join(fiber))
  })

describe("deadlines", () => {
  it.effect("the handshake has one deadline: a server that never answers fails it on time, naming the step", () =>
    Effect.gen(function* () {
      const [clientEnd, serverEnd] = yield* MemoryTransport.makePair()
      const methods: Array<string> = []
      yield* serverEnd.incoming.pipe(
        Stream.runForEach((frame) =>
          Effect.sync(() => {
            const message = frame._tag === "Success" ? (frame.success as { readonly method?: string }) : undefined
            if (message?.method !== undefined) methods.push(message.method)
          })
        ),
        Effect.forkScoped
      )
      const fiber = yield* ClientSession.make({ clientInfo, capabilities: {}, handshakeTimeout: "10 seconds" }).pipe(
        Effect.provideService(Transport.Transport, clientEnd),
        Effect.exit,
        Effect.forkChild
      )
      // The probe may use half the budget; the fallback `initialize` has the rest, and no more.
      yield* TestClock.adjust("9999 millis")
      assert.isUndefined(fiber.pollUnsafe(), "still waiting before the deadline")
      yield* TestClock.adjust("1 millis")
      const error = failureOf(yield* Fiber.join(fiber))
      assert.strictEqual(error._tag, "InitializeError")
      assert.strictEqual(error.reason, "Timeout")
      assert.strictEqual(error.message, "initialize got no answer within 5 s (the handshake's deadline is 10 s)")
      // The probe that got no answer is cancelled; `initialize` may not be (2025-03-26 lifecycle).
      assert.deepStrictEqual(methods, ["server/discover", "notifications/cancelled", "initialize"])
    })
  )

  it.effect("over Streamable HTTP, a server that accepts and never answers fails the handshake at its deadline", () =>
    Effect.gen(function* () {
      const posted = yield* Deferred.make<void>()
      const http = silentHttp(() => Deferred.doneUnsafe(posted, Exit.void))
      const transport = yield* StreamableHttpClient.make({ url: URL_MCP }).pipe(
        Effect.provideService(HttpClient.HttpClient, http)
      )
      const error = yield* handshakeFailsAt4s(transport, posted)
      assert.strictEqual(error.reason, "Timeout")
      assert.include(error.message, "initialize got no answer within 4 s")
    })
  )

  it.effect(
    "over Streamable HTTP, a server that never answers the POST of notifications/initialized fails the handshake at its deadline",
    () =>
      Effect.gen(function* () {
        const { transport, stalled, dropped } = yield* stallingServer("notifications/initialized")
        // `initialize` was answered at once: the notification has the whole budget. Before, it had no bound at all.
        const error = yield* handshakeFailsAt4s(transport, stalled)
        assert.strictEqual(error.reason, "Timeout")
        assert.strictEqual(
          error.message,
          "notifications/initialized was not taken within 4 s (the handshake's deadline is 4 s)"
        )
        // The POST given up on is dropped.
        yield* Deferred.await(dropped)
      })
  )

  it.effect(
    "the handshake's notification bounded by a request timeout shorter than the handshake's is its timeout",
    () =>
      Effect.gen(function* () {
        const { transport, stalled } = yield* stallingServer("notifications/initialized")
        const fiber = yield* ClientSession.make({
          clientInfo,
          capabilities: {},
          supportedVersions: ["2025-11-25"],
          handshakeTimeout: "10 seconds",
          peer: { requestTimeout: "3 seconds" }
        }).pipe(Effect.provideService(Transport.Transport, transport), Effect.exit, Effect.forkChild)
        yield* Deferred.await(stalled)
        yield* TestClock.adjust("3 seconds")
        const error = failureOf(yield* Fiber.join(fiber))
        // Before: reason "Transport", "initialization failed: notifications/initialized was not taken within 3s".
        assert.strictEqual(error.reason, "Timeout")
        assert.strictEqual(
          error.message,
          "notifications/initialized was not taken within 3 s (the handshake's deadline is 10 s)"
        )
      })
  )

  it.effect(
    "a notification the server never takes fails at the Peer's request timeout, and what follows still goes",
    () =>
      Effect.gen(function* () {
        const { transport, stalled, dropped } = yield* stallingServer("notifications/roots/list_changed")
        const client = yield* ClientSession.make({
          clientInfo,
          capabilities: {},
          supportedVersions: ["2025-11-25"],
          peer: { requestTimeout: "5 seconds" }
        }).pipe(Effect.provideService(Transport.Transport, transport))
        const notify = yield* client.peer.notify("notifications/roots/list_changed").pipe(Effect.exit, Effect.forkChild)
        yield* Deferred.await(stalled)
        yield* TestClock.adjust("4999 millis")
        assert.isUndefined(notify.pollUnsafe(), "still waiting before the deadline")
        yield* TestClock.adjust("1 millis")
        const error = failureOf(yield* Fiber.join(notify))
        assert.strictEqual(error._tag, "TransportError")
        assert.strictEqual(error.message, "notifications/roots/list_changed was not taken within 5s")
        yield* Deferred.await(dropped)
        // The POSTs after it were held back until then (so nothing overtakes it); now they go.
        yield* client.peer.request("ping", {})
      })
  )

  it.effect("a call whose POST is never answered times out at its deadline, which covers the send", () =>
    Effect.gen(function* () {
      const { client, stalled } = yield* stalledCalls
      const call = yield* client.peer
        .request("tools/call", { name: "echo", arguments: {} }, { timeout: "3 seconds" })
        .pipe(Effect.exit, Effect.forkChild)
      yield* Deferred.await(stalled)
      yield* TestClock.adjust("2999 millis")
      assert.isUndefined(call.pollUnsafe(), "still waiting before the deadline")
      yield* TestClock.adjust("1 millis")
      const error = failureOf(yield* Fiber.join(call))
      assert.strictEqual(error._tag, "RequestTimeout")
    })
  )

  it.effect("a call given up on drops its POST: a server that never answers holds no connection per call", () =>
    Effect.gen(function* () {
      const { client, stalled, dropped } = yield* stalledCalls
      const call = yield* client.peer
        .request("tools/call", { name: "echo", arguments: {} }, { timeout: "3 seconds" })
        .pipe(Effect.exit, Effect.forkChild)
      yield* Deferred.await(stalled)
      yield* TestClock.adjust("3 seconds")
      assert.strictEqual(failureOf(yield* Fiber.join(call))._tag, "RequestTimeout")
      // Before, the POST was read on until the session closed, on a stateful session: one open
      // connection per call that timed out.
      yield* Deferred.await(dropped)
    })
  )

  it.effect(
    "interrupting a call whose POST is never answered returns at once, its cancel notice sent on the side",
    () =>
      Effect.gen(function* () {
        const { client, stalled } = yield* stalledCalls
        const call = yield* client.peer.request("tools/call", { name: "echo", arguments: {} }).pipe(Effect.forkChild)
        yield* Deferred.await(stalled)
        // No clock moves: the interrupt waits neither on the server nor on the cancel notice's POST.
        yield* Fiber.interrupt(call)
        assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(call)))
      })
  )
})
