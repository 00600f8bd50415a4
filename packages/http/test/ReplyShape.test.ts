/**
 * The shape of a POST's reply is chosen by a rule, not by a scheduler turn:
 * the server writes the reply once the session took the frame, so an answer
 * that needed no wait is there and goes out whole with the head (one JSON
 * body, or the SSE events as one body); an answer still to come gets the
 * head first and follows (a space-led JSON body, or a streamed SSE body).
 * The test waits on signals only: the reply built, the handler released.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import { inMemoryClient, openSession, rawPost, serverOptions } from "./StreamableHttpFixtures.ts"

const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name } })

const serveRecording = (responseMode: "json" | "sse") =>
  Effect.gen(function* () {
    /** What `later` waits for: the test completes it once it saw the head go out. */
    const release = yield* Deferred.make<void>()
    // `now` answers at once; `later` once released.
    const tools: Session.Handler = (params) => {
      const name = (params as { readonly name: string }).name
      const answer = { content: [{ type: "text", text: name }] }
      return name === "later" ? Effect.as(Deferred.await(release), answer) : Effect.succeed(answer)
    }
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make(serverOptions(new Map([["tools/call", tools]]))),
      responseMode
    })
    /** The body kind of each reply as the server built it: `Uint8Array` (whole) or `Stream`. */
    const bodies = yield* Queue.unbounded<string>()
    const http = inMemoryClient(Effect.tap(server.handler, (response) => Queue.offer(bodies, response.body._tag)))
    const id = yield* openSession(http)
    yield* Queue.clear(bodies)
    const headers = { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" }
    /** `later` called: its reply's body kind once built, then its text once released. */
    const later = (id: number) =>
      Effect.gen(function* () {
        const post = yield* Effect.forkChild(rawPost(http, call(id, "later"), headers))
        const kind = yield* Queue.take(bodies)
        yield* Deferred.succeed(release, undefined)
        return { kind, reply: yield* Fiber.join(post) }
      })
    return { http, bodies, headers, later }
  })

describe("Streamable HTTP server: the shape of a POST's reply", () => {
  it.effect("JSON: answered as the frame was taken, one whole body; an answer still to come, the head first", () =>
    Effect.gen(function* () {
      const { http, bodies, headers, later } = yield* serveRecording("json")
      const now = yield* rawPost(http, call(2, "now"), headers)
      assert.strictEqual(yield* Queue.take(bodies), "Uint8Array")
      assert.strictEqual(JSON.parse(now.text).result.content[0].text, "now")
      assert.isFalse(now.text.startsWith(" "))
      // The reply was built (its head ready to go) before the handler was released.
      const { kind, reply } = yield* later(3)
      assert.strictEqual(kind, "Stream")
      // The body is led by a space (JSON allows it), then the answer.
      assert.isTrue(reply.text.startsWith(" "))
      assert.strictEqual(JSON.parse(reply.text).result.content[0].text, "later")
    })
  )

  it.effect("SSE: answered as the frame was taken, the events as one body; an answer still to come, streamed", () =>
    Effect.gen(function* () {
      const { http, bodies, headers, later } = yield* serveRecording("sse")
      for (let id = 2; id < 5; id++) {
        const now = yield* rawPost(http, call(id, "now"), headers)
        assert.strictEqual(yield* Queue.take(bodies), "Uint8Array")
        assert.include(now.text, `"id":${id},"result"`)
      }
      const { kind, reply } = yield* later(5)
      assert.strictEqual(kind, "Stream")
      assert.include(reply.text, `"id":5,"result"`)
    })
  )
})
