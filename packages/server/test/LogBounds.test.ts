/**
 * Log notices a server holds for a client that takes them slower than they
 * are made are bounded: a request's own (`ServerRequest.log` waits, a line of
 * effect's logger is dropped and counted), and the broadcasts of
 * `McpServer.log` (past 1,024 waiting on one session, dropped). The client
 * here is a raw end of a memory pair that reads only when the test takes a
 * frame: its transport's small buffer fills, and the server's sends wait.
 */
import { assert, describe, it } from "@effect/vitest"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const lines = 3000
/** What the notices in flight may add to the server's bound: the pair's buffer, the reader's, a send under way. */
const slack = 64

type Notice = { readonly method?: string; readonly id?: number; readonly params?: { level: string; data: unknown } }

/** A session of `server` on 2025-11-25 whose raw client reads one frame per `take`. */
const rawSession = <E>(server: Layer.Layer<McpServer.McpServer, E>) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(server)
    const [serverEnd, rawEnd] = yield* MemoryTransport.makePair({ capacity: 8 })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    // Capacity 1: the reader stops at the first frame nobody took, and the pair's buffer fills behind it.
    const frames = yield* Queue.bounded<Notice>(1)
    yield* rawEnd.incoming.pipe(
      Stream.runForEach((frame) =>
        Result.isSuccess(frame) ? Queue.offer(frames, frame.success as Notice) : Effect.void
      ),
      Effect.forkScoped
    )
    yield* rawEnd.send(
      JsonRpc.request(0, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "slow-reader", version: "1" }
      })
    )
    yield* Queue.take(frames)
    yield* rawEnd.send(JsonRpc.notification("notifications/initialized"))
    return { context, send: rawEnd.send, take: Queue.take(frames) }
  })

describe("log notices for a client that reads slowly", () => {
  it.effect("ServerRequest.log waits while a request holds 1,024 of them: the handler runs at the client's pace", () =>
    Effect.gen(function* () {
      const logged = { count: 0 }
      const flood = Tool.make("flood", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            for (let i = 0; i < lines; i++) {
              yield* ServerRequest.log("info", i)
              logged.count++
            }
            return "done"
          })
      })
      const { send, take } = yield* rawSession(
        Tool.layer(flood).pipe(Layer.provideMerge(McpServer.layer({ name: "s", version: "1" })))
      )
      yield* send(JsonRpc.request(1, "tools/call", { name: "flood", arguments: {} }))
      let received = 0
      let answered = false
      while (!answered) {
        const frame = yield* take
        // The handler is never further ahead of the client than the request's bound.
        assert.isAtMost(logged.count - received, 1024 + slack)
        if (frame.method === "notifications/message") received++
        else answered = frame.id === 1
      }
      assert.strictEqual(received, lines)
    }).pipe(Effect.scoped)
  )

  it.effect("effect's logger cannot wait: past 1,024 held, its lines are dropped and a warning says how many", () =>
    Effect.gen(function* () {
      const logged = yield* Deferred.make<void>()
      const chatty = Tool.make("chatty", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            for (let i = 0; i < lines; i++) yield* Effect.logInfo(`line ${i}`)
            yield* Deferred.succeed(logged, undefined)
            return "done"
          })
      })
      const { send, take } = yield* rawSession(
        Tool.layer(chatty).pipe(Layer.provideMerge(McpServer.layer({ name: "s", version: "1" })))
      )
      yield* send(JsonRpc.request(1, "tools/call", { name: "chatty", arguments: {} }))
      // Every line was logged before the client reads any.
      yield* Deferred.await(logged)
      const infos: Array<unknown> = []
      let warning: string | undefined
      for (;;) {
        const frame = yield* take
        if (frame.id === 1) break
        if (frame.params?.level === "info") infos.push(frame.params.data)
        else if (frame.params?.level === "warning") warning = String(frame.params.data)
      }
      assert.isAtMost(infos.length, 1024 + slack)
      const dropped = Number(/^(\d+) log messages of this request dropped/.exec(warning ?? "")?.[1])
      assert.strictEqual(infos.length + dropped, lines, warning)
    }).pipe(Effect.scoped)
  )

  it.effect("McpServer.log holds at most 1,024 broadcasts for a session that does not read; the rest are dropped", () =>
    Effect.gen(function* () {
      const { context, send, take } = yield* rawSession(McpServer.layer({ name: "s", version: "1" }))
      const server = yield* McpServer.McpServer.pipe(Effect.provideContext(context))
      for (let i = 0; i < lines; i++) yield* server.log("info", i)
      // The answer to a ping comes after every notice the session was given.
      yield* send(JsonRpc.request(1, "ping"))
      let received = 0
      for (;;) {
        const frame = yield* take
        if (frame.id === 1) break
        if (frame.method === "notifications/message") received++
      }
      assert.isAbove(received, 1000)
      assert.isAtMost(received, 1024 + slack)
    }).pipe(Effect.scoped)
  )
})
