import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] })

let interrupted = 0
// Completed when the slow handler is interrupted, for the test that waits for that.
let onInterrupted: Deferred.Deferred<void> | undefined

const Echo = Tool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text: t }) => Effect.succeed(text(t))
})
const Slow = Tool.make("slow", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.sleep("1 hour").pipe(
      Effect.as(text("late")),
      Effect.onInterrupt(() =>
        Effect.sync(() => {
          interrupted++
          if (onInterrupted !== undefined) Deferred.doneUnsafe(onInterrupted, Exit.void)
        })
      )
    )
})
const Steps = Tool.make("steps", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      for (const n of [1, 2, 3]) {
        yield* Effect.sleep("1 second")
        yield* ServerRequest.progress({ progress: n, total: 3 })
      }
      return text("done")
    })
})
const Ask = Tool.make("ask", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.map(
      Sampling.createMessage({ messages: [{ role: "user", content: { type: "text", text: "2+2?" } }], maxTokens: 5 }),
      (answer) => text(Sampling.text(answer))
    )
})
const Server = Tool.layer(Echo, Slow, Steps, Ask).pipe(
  Layer.provideMerge(McpServer.layer({ name: "harness-test", version: "1.0.0" }))
)

const model = SamplingHandler.layer(() =>
  Effect.succeed({ role: "assistant", content: { type: "text", text: "4" }, model: "fake" })
)

// A tool that asks the client twice in a row, and a model that takes a second (of the TestClock) per answer:
// every step of the exchange after the first ask is woken by `TestClock.adjust`.
const prompt = (question: string) => ({
  messages: [{ role: "user" as const, content: { type: "text" as const, text: question } }],
  maxTokens: 5
})
const AskTwice = Tool.make("ask-twice", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      const first = Sampling.text(yield* Sampling.createMessage(prompt("2+2?")))
      const second = Sampling.text(yield* Sampling.createMessage(prompt("3+3?")))
      return text(`${first} ${second}`)
    })
})
const AskingServer = Tool.layer(AskTwice).pipe(Layer.provideMerge(McpServer.layer({ name: "asks", version: "1.0.0" })))
const answers: { readonly [question: string]: string } = { "2+2?": "4", "3+3?": "6" }
// The questions the model was asked, in order; `asked` is completed at the first.
let questions: Array<string> = []
let asked: Deferred.Deferred<void> | undefined
const slowModel = SamplingHandler.layer((params) =>
  Effect.gen(function* () {
    const question = (params.messages[0]!.content as { readonly text: string }).text
    questions.push(question)
    if (asked !== undefined) Deferred.doneUnsafe(asked, Exit.void)
    yield* Effect.sleep("1 second")
    return { role: "assistant", content: { type: "text", text: answers[question]! }, model: "fake" }
  })
)

describe("McpTest", () => {
  for (const revision of ProtocolVersion.all) {
    it.effect(`connects a client speaking ${revision}, which calls a tool and a sampling round trip`, () =>
      Effect.gen(function* () {
        const { client, server } = yield* McpTest.connect(Server, { revision, clientHandlers: model })
        assert.strictEqual(client.revision, revision)
        assert.strictEqual(client.serverInfo?.name, "harness-test")
        assert.strictEqual(server.sessionCount(), 1)
        assert.deepStrictEqual((yield* client.callTool("echo", { text: "hi" })).content, text("hi").content)
        assert.deepStrictEqual((yield* client.callTool("ask", {})).content, text("4").content)
      })
    )
  }

  // On 2026-07-28 a tool's ask is an `input_required` result and the client's retry (with a signed
  // `requestState`): the same test runs on the same clock steps as the request the server sends on 2025-11-25.
  for (const revision of ["2025-11-25", "2026-07-28"] as const) {
    it.effect(`${revision}: a tool that asks the client twice advances one ask per TestClock.adjust`, () =>
      Effect.gen(function* () {
        const { client } = yield* McpTest.connect(AskingServer, { revision, clientHandlers: slowModel })
        questions = []
        asked = Deferred.makeUnsafe<void>()
        const call = yield* Effect.forkChild(client.callTool("ask-twice", {}))
        yield* Deferred.await(asked)
        assert.deepStrictEqual(questions, ["2+2?"])
        // The first answer reaches the tool, and its second ask reaches the model, before adjust returns.
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(questions, ["2+2?", "3+3?"])
        assert.isUndefined(call.pollUnsafe())
        yield* TestClock.adjust("1 second")
        const exit = call.pollUnsafe()
        assert.isDefined(exit, "the call is not done right after the TestClock.adjust that answers its last ask")
        assert.deepStrictEqual(Exit.isSuccess(exit!) ? exit.value.content : exit, text("4 6").content)
      })
    )
  }

  it.effect("layer provides the client; a request timeout and the cancellation it sends run on the TestClock", () =>
    Effect.gen(function* () {
      const client = yield* McpClient.McpClient
      const before = interrupted
      const handlerInterrupted = Deferred.makeUnsafe<void>()
      onInterrupted = handlerInterrupted
      const fiber = yield* Effect.forkChild(client.callTool("slow", {}, { timeout: "5 seconds" }))
      yield* TestClock.adjust("4 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      assert.match(String(Exit.isFailure(exit) ? exit.cause : ""), /RequestTimeout/)
      // The cancellation the timeout sends interrupts the handler on the server.
      yield* Deferred.await(handlerInterrupted)
      assert.strictEqual(interrupted, before + 1)
    }).pipe(Effect.provide(McpTest.layer(Server, { revision: "2025-11-25" })))
  )

  it.effect("advanceUntilDone drives a progress Stream to its result", () =>
    Effect.gen(function* () {
      const { client } = yield* McpTest.connect(Server, { revision: "2025-06-18" })
      const fiber = yield* Effect.forkChild(Stream.runCollect(client.callToolWithProgress("steps", {})))
      const events = yield* McpTest.advanceUntilDone(fiber, "1 second")
      assert.deepStrictEqual(
        events.map((e) => (e._tag === "Progress" ? e.update.progress : "result")),
        [1, 2, 3, "result"]
      )
    })
  )

  it.effect("advanceUntilDone fails, saying so, when the fiber is not done after maxSteps", () =>
    Effect.gen(function* () {
      const { client } = yield* McpTest.connect(Server, {
        revision: "2025-11-25",
        client: { peer: { requestTimeout: "2 hours" } }
      })
      const call = yield* Effect.forkChild(client.callTool("slow", {}))
      // Before, it joined the fiber after the last step and waited for a clock nothing moved: the test hung.
      const exit = yield* Effect.exit(McpTest.advanceUntilDone(call, "1 second", 10))
      assert.isTrue(Exit.isFailure(exit))
      assert.match(
        String(Exit.isFailure(exit) ? exit.cause : ""),
        /advanceUntilDone: the fiber was not done after 10 steps of 1s/
      )
    })
  )

  it.effect("makeClient adds a client of its own revision to the same server", () =>
    Effect.gen(function* () {
      const { client, server, context } = yield* McpTest.connect(Server, { revision: "2025-03-26" })
      const second = yield* McpTest.makeClient({ revision: "2024-11-05" }).pipe(Effect.provideContext(context))
      assert.strictEqual(client.revision, "2025-03-26")
      assert.strictEqual(second.revision, "2024-11-05")
      assert.strictEqual(server.sessionCount(), 2)
    })
  )

  it.effect("makeClientFor serves a scripted ServerSession; clientTransport sees every frame the client sends", () =>
    Effect.gen(function* () {
      const sent: Array<string> = []
      const recorder = (end: Transport.TransportShape) =>
        Effect.succeed<Transport.TransportShape>({
          incoming: end.incoming,
          send: (frame, options) =>
            Effect.suspend(() => {
              for (const m of Array.isArray(frame) ? frame : [frame]) {
                if ("method" in (m as JsonRpc.Message)) sent.push((m as { readonly method: string }).method)
              }
              return end.send(frame, options)
            })
        })
      const handlers = new Map<string, Session.Handler>([["tools/list", () => Effect.succeed({ tools: [] })]])
      const client = yield* McpTest.makeClientFor(
        ServerSession.make({ serverInfo: { name: "scripted", version: "1" }, capabilities: { tools: {} }, handlers }),
        { revision: "2025-11-25", clientTransport: recorder }
      )
      assert.deepStrictEqual(yield* client.listTools(), { tools: [] })
      assert.deepStrictEqual(sent, ["initialize", "notifications/initialized", "tools/list"])
    })
  )

  it.effect(
    "connectRaw answers with the server's JSON and records notifications; codec: false hands objects over",
    () =>
      Effect.gen(function* () {
        for (const codec of [true, false]) {
          const raw = yield* McpTest.connectRaw(Server, { revision: "2025-11-25", codec })
          const listed = (yield* raw.request("tools/list")) as {
            readonly tools: ReadonlyArray<{ readonly name: string }>
          }
          assert.deepStrictEqual(listed.tools.map((t) => t.name).sort(), ["ask", "echo", "slow", "steps"])
          yield* McpServer.log("info", "hello").pipe(Effect.provideContext(raw.context))
          assert.deepStrictEqual(yield* raw.drain, [
            { method: "notifications/message", params: { level: "info", data: "hello" } }
          ])
        }
      })
  )

  it.effect("an unsupported revision fails the handshake with InitializeError", () =>
    Effect.gen(function* () {
      const old = McpServer.layer({ name: "old", version: "1", supportedVersions: ["2024-11-05"] })
      const exit = yield* Effect.exit(McpTest.connect(old, { revision: "2025-11-25" }))
      assert.isTrue(Exit.isFailure(exit))
      assert.match(String(Exit.isFailure(exit) ? exit.cause : ""), /InitializeError/)
    })
  )
})
