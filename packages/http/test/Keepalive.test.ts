/**
 * Every SSE body the Streamable HTTP server writes gets a keepalive comment once its reader has taken nothing for
 * `keepaliveInterval`, by one timer of the body's own: a stateless reply (its one-shot session is watched by no
 * registry, and used to get none: a 5 s call on a 1 s interval had only the opening `:`), a stateful POST's reply
 * and the GET stream. On the TestClock, with a tool that answers only when the test says so.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { forkIdle, runIdle } from "../../engine/test/fixtures.ts"
import { inMemoryClient, openSession, postHeaders, serverOptions, URL_MCP } from "./StreamableHttpFixtures.ts"

const KEEPALIVE = ":keepalive\n\n"

/** A server whose `wait` tool answers once `release` is done; keepalives every second. */
const make = (stateless: boolean) =>
  Effect.gen(function* () {
    const release = yield* Deferred.make<void>()
    const tools: Session.Handler = () =>
      Effect.as(Deferred.await(release), { content: [{ type: "text", text: "released" }] })
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make(serverOptions(new Map([["tools/call", tools]]))),
      stateless,
      keepaliveInterval: "1 second"
    })
    return { http: inMemoryClient(server.handler), release }
  })

const waitCall = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "wait", arguments: {} } }

/** The reply's text, chunk by chunk as the client reads it, in a child fiber (`fiber` ends with the body). */
const read = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function* () {
    const chunks: Array<string> = []
    const fiber = yield* forkIdle(
      response.stream.pipe(
        Stream.decodeText,
        Stream.runForEach((chunk) => Effect.sync(() => chunks.push(chunk)))
      )
    )
    return { chunks, fiber }
  })

/** What arrives while the clock moves on by `duration` (read once everything it woke has come to rest). */
const after = (chunks: Array<string>, duration: `${number} millis` | `${number} second${"" | "s"}`) =>
  Effect.gen(function* () {
    const before = chunks.length
    yield* TestClock.adjust(duration)
    return chunks.slice(before).join("")
  })

/** Keepalives at 1 s and 2 s of silence (none before), then the answer once the tool is released. */
const keptAlive = (
  chunks: Array<string>,
  fiber: Fiber.Fiber<void, unknown>,
  release: Deferred.Deferred<void> | undefined
) =>
  Effect.gen(function* () {
    assert.strictEqual(yield* after(chunks, "999 millis"), "", "silent for less than the interval: nothing")
    assert.strictEqual(yield* after(chunks, "1 millis"), KEEPALIVE)
    assert.strictEqual(yield* after(chunks, "999 millis"), "")
    assert.strictEqual(yield* after(chunks, "1 millis"), KEEPALIVE)
    if (release === undefined) return
    const before = chunks.length
    yield* runIdle(Deferred.succeed(release, undefined))
    yield* Fiber.join(fiber)
    const answer = chunks.slice(before).join("")
    assert.match(answer, /^event: message\n(id: \S+\n)?data: \{"jsonrpc":"2\.0","id":7,"result":\{.*"released"/)
  })

describe("Streamable HTTP: keepalive comments on every SSE body", () => {
  it.effect("a stateless reply, while its call runs", () =>
    Effect.gen(function* () {
      const { http, release } = yield* make(true)
      const response = yield* runIdle(
        http.execute(
          HttpClientRequest.post(URL_MCP).pipe(
            HttpClientRequest.bodyText(JSON.stringify(waitCall), "application/json"),
            HttpClientRequest.setHeaders({ ...postHeaders, "mcp-protocol-version": "2025-11-25" })
          )
        )
      )
      assert.strictEqual(response.headers["content-type"], "text/event-stream")
      assert.isUndefined(response.headers["mcp-session-id"])
      const { chunks, fiber } = yield* read(response)
      assert.deepStrictEqual(chunks, [":\n\n"], "the reply opens with a comment at once")
      yield* keptAlive(chunks, fiber, release)
    })
  )

  it.effect("a stateful POST's reply, while its call runs", () =>
    Effect.gen(function* () {
      const { http, release } = yield* make(false)
      const id = yield* openSession(http)
      const response = yield* runIdle(
        http.execute(
          HttpClientRequest.post(URL_MCP).pipe(
            HttpClientRequest.bodyText(JSON.stringify(waitCall), "application/json"),
            HttpClientRequest.setHeaders({ ...postHeaders, "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" })
          )
        )
      )
      const { chunks, fiber } = yield* read(response)
      // The priming event (an id, no data), then silence.
      assert.match(chunks.join(""), /^id: \S+\nretry: \d+\ndata: \n\n$/)
      yield* keptAlive(chunks, fiber, release)
    })
  )

  it.effect("the GET stream, while nothing is sent on it", () =>
    Effect.gen(function* () {
      const { http } = yield* make(false)
      const id = yield* openSession(http)
      const response = yield* runIdle(
        http.execute(
          HttpClientRequest.get(URL_MCP).pipe(
            HttpClientRequest.setHeaders({
              accept: "text/event-stream",
              "mcp-session-id": id,
              "mcp-protocol-version": "2025-11-25"
            })
          )
        )
      )
      const { chunks, fiber } = yield* read(response)
      assert.match(chunks.join(""), /^id: \S+\nretry: \d+\ndata: \n\n$/)
      yield* keptAlive(chunks, fiber, undefined)
      yield* Fiber.interrupt(fiber)
    })
  )
})
