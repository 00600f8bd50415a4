/**
 * The server's requests to the client, seen from a raw client session: a
 * per-ask timeout (on the TestClock) that cancels the client's work, the
 * client's progress reaching the asking handler, cancellation of the asking
 * handler reaching the client's handler, and the roots-changed hook. Also
 * broadcasts: one session that never takes a notification holds up neither
 * the broadcaster nor the other sessions.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Roots from "@effect-mcp/server/Roots"
import * as Sampling from "@effect-mcp/server/Sampling"
import { type AskOptions, type ClientRequestError, ServerRequest } from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { type Obj, testServer } from "./fixtures.ts"

const question = { messages: [{ role: "user", content: { type: "text", text: "2+2?" } }], maxTokens: 5 } as const
const answer = { role: "assistant", content: { type: "text", text: "4" }, model: "fake" }

/** A tool whose one ask, bounded to 3 seconds, ends in "answered" or the reason it failed. */
const withTimeout = (
  name: string,
  ask: (options: AskOptions) => Effect.Effect<unknown, ClientRequestError, ServerRequest>
) =>
  Tool.make(name, {
    input: Schema.Struct({}),
    handler: () =>
      ask({ timeout: "3 seconds" }).pipe(
        Effect.as("answered"),
        Effect.catch((error) => Effect.succeed(error.reason))
      )
  })

const tools = Tool.layer(
  withTimeout("sample_with_timeout", (options) => Sampling.createMessage(question, options)),
  withTimeout("form_with_timeout", (options) =>
    Elicitation.form({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) }, options)
  ),
  withTimeout("roots_with_timeout", Roots.listWith),
  Tool.make("form_score", {
    input: Schema.Struct({}),
    handler: () =>
      Elicitation.form({ message: "Score?", schema: Schema.Struct({ score: Schema.Number }) }).pipe(
        Effect.as("answered"),
        Effect.catch((error) => Effect.succeed(error.message))
      )
  }),
  Tool.make("ask_with_progress", {
    input: Schema.Struct({}),
    handler: () => {
      const seen: Array<number> = []
      return Sampling.createMessage(question, { onProgress: (update) => void seen.push(update.progress) }).pipe(
        Effect.map((result) => `${Sampling.text(result)} after ${JSON.stringify(seen)}`)
      )
    }
  }),
  Tool.make("ask", {
    input: Schema.Struct({}),
    handler: () => Effect.map(Sampling.createMessage(question), Sampling.text)
  }),
  Tool.make("ask_from_another_fiber", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function* () {
        const request = yield* ServerRequest
        // A fiber of its own, run from a Promise: its context holds nothing of the request or its session.
        const asked = yield* Effect.promise(() =>
          Effect.runPromise(Effect.result(request.ask("sampling/createMessage", question)))
        )
        return asked._tag === "Success"
          ? (asked.success as { readonly content: { readonly text: string } }).content.text
          : asked.failure.message
      })
  })
)

/** What the client's sampling handler went through. */
interface ClientSide {
  started: number
  interrupted: number
  /** Completed at the first start and the first interruption of the handler. */
  readonly firstStart: Deferred.Deferred<void>
  readonly firstInterrupt: Deferred.Deferred<void>
}

const makeSide = (): ClientSide => ({
  started: 0,
  interrupted: 0,
  firstStart: Deferred.makeUnsafe<void>(),
  firstInterrupt: Deferred.makeUnsafe<void>()
})

/** A raw client session on the server in `context`; `asked` answers the server's sampling, elicitation and roots requests. */
const clientSession = (
  context: Context.Context<McpServer.McpServer>,
  asked: Session.Handler,
  options: { readonly wrap?: (end: Transport.TransportShape) => Transport.TransportShape } = {}
) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, options.wrap?.(serverEnd) ?? serverEnd),
      Effect.provideContext(context)
    )
    const notifications: Array<string> = []
    // Each notification is also offered to `arrived`, for tests that wait for one.
    const arrived = yield* Queue.unbounded<string>()
    const record = (method: string) =>
      [
        method,
        () =>
          Effect.andThen(
            Effect.sync(() => void notifications.push(method)),
            Queue.offer(arrived, method)
          )
      ] as const
    const client = yield* ClientSession.make({
      clientInfo: { name: "asks-client", version: "1.0.0" },
      capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } },
      supportedVersions: ["2025-11-25"],
      handlers: new Map<string, Session.Handler>([
        ["sampling/createMessage", asked],
        ["elicitation/create", asked],
        ["roots/list", asked]
      ]),
      notificationHandlers: new Map([record("notifications/tools/list_changed")])
    }).pipe(Effect.provideService(Transport.Transport, clientEnd), Effect.orDie)
    return { client, notifications, nextNotification: Queue.take(arrived) }
  })

const serverWith = (features: Layer.Layer<never, never, McpServer.McpServer>) =>
  Layer.build(testServer(features, { declare: ["tools"] }))

/** A client handler that never answers and counts its starts and interruptions. */
const hanging =
  (side: ClientSide): Session.Handler =>
  () =>
    Effect.suspend(() => {
      side.started++
      Deferred.doneUnsafe(side.firstStart, Exit.void)
      return Effect.onInterrupt(Effect.never, () =>
        Effect.sync(() => {
          side.interrupted++
          Deferred.doneUnsafe(side.firstInterrupt, Exit.void)
        })
      )
    })

const textOf = (result: unknown) => (result as Obj).content[0].text as string

describe("server requests to the client", () => {
  for (const tool of ["sample_with_timeout", "form_with_timeout", "roots_with_timeout"]) {
    it.effect(
      `${tool}: an ask with a timeout fails with Timeout when it passes, and the client's handler is cancelled`,
      () =>
        Effect.gen(function* () {
          const side = makeSide()
          const { client } = yield* clientSession(yield* serverWith(tools), hanging(side))
          const call = yield* Effect.forkChild(client.request("tools/call", { name: tool, arguments: {} }))
          // The server loads its ask machinery on the first ask (a real import): wait for the ask.
          yield* Deferred.await(side.firstStart)
          assert.strictEqual(side.started, 1)
          yield* TestClock.adjust("2 seconds")
          assert.isUndefined(call.pollUnsafe())
          yield* TestClock.adjust("1 second")
          assert.strictEqual(textOf(yield* Fiber.join(call)), "Timeout")
          yield* Deferred.await(side.firstInterrupt)
          assert.strictEqual(side.interrupted, 1)
        })
    )
  }

  it.effect("a form answer of the wrong type is refused with the real reason, not the number union's noise", () =>
    Effect.gen(function* () {
      const context = yield* serverWith(tools)
      const { client } = yield* clientSession(context, () =>
        Effect.succeed({ action: "accept", content: { score: "95" } })
      )
      const result = yield* client.request("tools/call", { name: "form_score", arguments: {} })
      // Before: `Expected "Infinity" | "-Infinity" | "NaN"\n  at ["score"]`.
      assert.strictEqual(
        textOf(result),
        "elicitation/create: the submitted form does not match its schema: score: Expected number"
      )
    })
  )

  it.effect("a handler asks the client from a fiber of its own (the request knows its session)", () =>
    Effect.gen(function* () {
      const { client } = yield* clientSession(yield* serverWith(tools), () => Effect.succeed(answer))
      const result = yield* client.request("tools/call", { name: "ask_from_another_fiber", arguments: {} })
      // Before: "sampling/createMessage: tools/call cannot ask the client for input on protocol 2025-11-25".
      assert.strictEqual(textOf(result), "4")
    })
  )

  it.effect("the client's progress on an ask reaches the handler's onProgress", () =>
    Effect.gen(function* () {
      const reporting: Session.Handler = () =>
        Effect.gen(function* () {
          const current = yield* CurrentRequest.CurrentRequest
          yield* current.progress({ progress: 1, total: 2 })
          yield* current.progress({ progress: 2, total: 2 })
          return answer
        })
      const { client } = yield* clientSession(yield* serverWith(tools), reporting)
      const result = yield* client.request("tools/call", { name: "ask_with_progress", arguments: {} })
      assert.strictEqual(textOf(result), "4 after [1,2]")
    })
  )

  it.effect(
    "cancelling the call whose handler awaits an ask cancels the ask: the client's handler is interrupted",
    () =>
      Effect.gen(function* () {
        const side = makeSide()
        const { client } = yield* clientSession(yield* serverWith(tools), hanging(side))
        const call = yield* Effect.forkChild(client.request("tools/call", { name: "ask", arguments: {} }))
        yield* Deferred.await(side.firstStart)
        assert.strictEqual(side.started, 1)
        // The client gives up: it sends notifications/cancelled, the server interrupts the tool's
        // handler, whose pending ask then sends notifications/cancelled back.
        yield* Fiber.interrupt(call)
        yield* Deferred.await(side.firstInterrupt)
        assert.strictEqual(side.interrupted, 1)
        // Only that request was cancelled: the session still serves (the Peer consumes the notification).
        assert.isDefined(yield* client.request("tools/list", {}))
      })
  )

  it.effect("a roots hook hears notifications/roots/list_changed and can ask that client for its roots", () =>
    Effect.gen(function* () {
      // The hook's ask loads the roots machinery on first use (a real import): wait for the answer, not for turns.
      const heard = yield* Deferred.make<string>()
      const hook = Roots.layerOnListChanged((change) =>
        change.list.pipe(
          Effect.flatMap((roots) =>
            Deferred.succeed(heard, `${change.clientInfo?.name}: ${roots.map((r) => r.uri).join()}`)
          ),
          Effect.asVoid,
          Effect.orDie
        )
      )
      const context = yield* serverWith(Layer.merge(tools, hook))
      const { client } = yield* clientSession(context, () =>
        Effect.succeed({ roots: [{ uri: "file:///work", name: "work" }] })
      )
      yield* client.notify("notifications/roots/list_changed", {})
      assert.strictEqual(yield* Deferred.await(heard), "asks-client: file:///work")
    })
  )
})

describe("broadcasts", () => {
  it.effect("list_changed waits on no peer: a session that never takes it holds up neither the caller nor others", () =>
    Effect.gen(function* () {
      const context = yield* serverWith(tools)
      const server = Context.get(context, McpServer.McpServer)
      const isListChanged = (frame: Transport.Outgoing) =>
        !Array.isArray(frame) && (frame as { readonly method?: string }).method === "notifications/tools/list_changed"
      // The first session's transport never takes a list_changed (a client that stopped reading).
      const stuck = yield* clientSession(context, () => Effect.succeed(answer), {
        wrap: (end) => ({
          incoming: end.incoming,
          send: (frame, options) => (isListChanged(frame) ? Effect.never : end.send(frame, options))
        })
      })
      const healthy = yield* clientSession(context, () => Effect.succeed(answer))
      assert.strictEqual(server.sessionCount(), 2)
      const broadcast = yield* Effect.forkChild(server.listChanged("tools"))
      assert.strictEqual(yield* healthy.nextNotification, "notifications/tools/list_changed")
      // Nobody takes the stuck session's copy and the clock stands still: a broadcaster held up would hang here.
      yield* Fiber.join(broadcast)
      assert.deepStrictEqual(healthy.notifications, ["notifications/tools/list_changed"])
      assert.deepStrictEqual(stuck.notifications, [])
      // The stuck session still answers requests.
      assert.isDefined(yield* stuck.client.request("tools/list", {}))
    })
  )
})
