/**
 * The shape of a POST's reply is chosen by a rule, not by a scheduler turn:
 * the session handles a frame as it is offered when nothing is ahead of it,
 * so an answer that needed no wait is there when the server builds the
 * reply, and goes out whole with the head (one JSON body, or the SSE events
 * as one body); an answer still to come gets the head first and follows
 * (a space-led JSON body, or a streamed SSE body). Time is the TestClock's.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { inMemoryClient, openSession, rawPost, serverOptions } from "./StreamableHttpFixtures.ts"

/** `now` answers at once; `yields` after one scheduler turn; `later` after a second of the TestClock. */
const tools: Session.Handler = (params) => {
  const name = (params as { readonly name: string }).name
  const answer = { content: [{ type: "text", text: name }] }
  if (name === "later") return Effect.as(Effect.sleep("1 second"), answer)
  return name === "yields" ? Effect.as(Effect.yieldNow, answer) : Effect.succeed(answer)
}

const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name } })

const serveRecording = (responseMode: "json" | "sse") =>
  Effect.gen(function* () {
    const server = yield* StreamableHttpServer.make({
      session: ServerSession.make(serverOptions(new Map([["tools/call", tools]]))),
      responseMode
    })
    /** The body kind of each reply the server built: `Uint8Array` (whole) or `Stream`. */
    const bodies: Array<string> = []
    const http = inMemoryClient(
      Effect.tap(server.handler, (response) => Effect.sync(() => bodies.push(response.body._tag)))
    )
    const id = yield* openSession(http)
    return { http, bodies, headers: { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" } }
  })

describe("Streamable HTTP server: the shape of a POST's reply", () => {
  it.effect("JSON: answered as the frame was taken, one whole body; an answer still to come, the head first", () =>
    Effect.gen(function* () {
      const { http, bodies, headers } = yield* serveRecording("json")
      const now = yield* rawPost(http, call(2, "now"), headers)
      assert.strictEqual(bodies.at(-1), "Uint8Array")
      assert.strictEqual(JSON.parse(now.text).result.content[0].text, "now")
      assert.isFalse(now.text.startsWith(" "))
      // Waiting on anything, even one scheduler turn, is an answer still to come: never a race between the two.
      yield* rawPost(http, call(4, "yields"), headers)
      assert.strictEqual(bodies.at(-1), "Stream")

      const pending = yield* Effect.forkChild(rawPost(http, call(3, "later"), headers))
      yield* TestClock.adjust("1 second")
      const later = yield* Fiber.join(pending)
      assert.strictEqual(bodies.at(-1), "Stream")
      // The head went first; the body is led by a space (JSON allows it), then the answer.
      assert.isTrue(later.text.startsWith(" "))
      assert.strictEqual(JSON.parse(later.text).result.content[0].text, "later")
    })
  )

  it.effect("SSE: answered as the frame was taken, the events as one body; an answer still to come, streamed", () =>
    Effect.gen(function* () {
      const { http, bodies, headers } = yield* serveRecording("sse")
      for (let id = 2; id < 5; id++) {
        const now = yield* rawPost(http, call(id, "now"), headers)
        assert.strictEqual(bodies.at(-1), "Uint8Array")
        assert.include(now.text, `"id":${id},"result"`)
      }
      const yields = yield* rawPost(http, call(5, "yields"), headers)
      assert.strictEqual(bodies.at(-1), "Stream")
      assert.include(yields.text, `"id":5,"result"`)
      const pending = yield* Effect.forkChild(rawPost(http, call(6, "later"), headers))
      yield* TestClock.adjust("1 second")
      const later = yield* Fiber.join(pending)
      assert.strictEqual(bodies.at(-1), "Stream")
      assert.include(later.text, `"id":6,"result"`)
    })
  )
})
