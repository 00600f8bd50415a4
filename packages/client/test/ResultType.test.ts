/**
 * `resultType` on 2026-07-28: a result whose `resultType` the client does not
 * recognize is invalid (`InvalidResult`, `Malformed`, naming the value),
 * whatever the method and in every round of a request, while `complete`, or
 * none at all, is a finished result. So are the results the request path
 * does not see: the one `tasks/get` inlines for a completed task, the one
 * that ends a `subscriptions/listen`, and the handshake's `server/discover`
 * answer (an `InitializeError` with the `InvalidResult` as its cause).
 * Against a raw server end that answers as told.
 */
import { assert, describe, it } from "@effect/vitest"
import { InvalidResult } from "@effect-mcp/client/ClientError"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { clientInfo, serverInfo } from "./fixtures.ts"

type Obj = { readonly [key: string]: unknown }

const discovered = {
  resultType: "complete",
  supportedVersions: ["2026-07-28"],
  capabilities: { tools: {}, prompts: {} },
  _meta: { "io.modelcontextprotocol/serverInfo": serverInfo }
}

/**
 * A 2026-07-28 client against a raw end answering each request with `answer(method, params)`, after the
 * notifications `before` gives for it; `server/discover` is answered with `discover`.
 */
const against = (
  answer: (method: string, params: Obj) => unknown,
  options: {
    readonly discover?: Obj | undefined
    readonly before?: ((request: JsonRpc.Request) => ReadonlyArray<JsonRpc.Message>) | undefined
  } = {}
) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* serverEnd.incoming.pipe(
      Stream.runForEach((frame) => {
        if (Result.isFailure(frame)) return Effect.void
        const messages = (Array.isArray(frame.success) ? frame.success : [frame.success]) as Array<JsonRpc.Message>
        return Effect.forEach(
          messages.filter((m): m is JsonRpc.Request => "method" in m && "id" in m),
          (request) =>
            Effect.andThen(
              Effect.forEach(options.before?.(request) ?? [], (m) => serverEnd.send(m), { discard: true }),
              serverEnd.send({
                jsonrpc: "2.0",
                id: request.id,
                result:
                  request.method === "server/discover"
                    ? (options.discover ?? discovered)
                    : answer(request.method, (request.params ?? {}) as Obj)
              } as JsonRpc.Message)
            ),
          { discard: true }
        )
      }),
      Effect.forkScoped
    )
    return yield* McpClient.make({ clientInfo, supportedVersions: ["2026-07-28"] }).pipe(
      Effect.provideService(Transport.Transport, clientEnd)
    )
  })

const text = { content: [{ type: "text" as const, text: "done" }] }

const assertUnrecognized = (error: unknown, method: string) => {
  assert.instanceOf(error, InvalidResult)
  assert.strictEqual(error.method, method)
  assert.strictEqual(error.reason, "Malformed")
  assert.include(error.message, '"weird"')
}

describe("resultType on 2026-07-28", () => {
  it.effect("an unrecognized resultType fails the request as an invalid result, whatever the method", () =>
    Effect.gen(function* () {
      // Beside it, complete and an absent resultType are finished results.
      const complete = yield* against(() => ({ resultType: "complete", ...text }))
      assert.deepStrictEqual((yield* complete.callTool("any")).content, text.content)
      const absent = yield* against(() => text)
      assert.deepStrictEqual((yield* absent.callTool("any")).content, text.content)
      const client = yield* against(() => ({ resultType: "weird", ...text, tools: [], messages: [] }))
      assertUnrecognized(yield* Effect.flip(client.callTool("any")), "tools/call")
      assertUnrecognized(yield* Effect.flip(client.listTools()), "tools/list")
      assertUnrecognized(yield* Effect.flip(client.getPrompt("any")), "prompts/get")
      assertUnrecognized(yield* Effect.flip(client.request("tools/call", { name: "any" })), "tools/call")
      assertUnrecognized(yield* Effect.flip(client.requestOnce("tools/call", { name: "any" })), "tools/call")
    })
  )

  it.effect("a later round's answer is checked too", () =>
    Effect.gen(function* () {
      const client = yield* against((_, params) =>
        params.requestState === undefined
          ? { resultType: "input_required", inputRequests: {}, requestState: "again" }
          : { resultType: "weird", ...text }
      )
      assertUnrecognized(yield* Effect.flip(client.callTool("any")), "tools/call")
    })
  )
})

const extensionId = "io.modelcontextprotocol/tasks"

const task = (status: string, extra: Obj = {}) => ({
  taskId: "task-1",
  status,
  createdAt: "2026-07-28T00:00:00Z",
  lastUpdatedAt: "2026-07-28T00:00:00Z",
  ttlMs: 60_000,
  pollIntervalMs: 100,
  ...extra
})

/** A server of the Tasks extension whose `slow` tool runs as a task that completes with `result`. */
const taskServer = (result: Obj) =>
  against(
    (method) => {
      switch (method) {
        case "tools/call":
          return { resultType: "task", ...task("working") }
        case "tasks/get":
          return { resultType: "complete", ...task("completed", { result }) }
        default:
          return { resultType: "complete" }
      }
    },
    { discover: { ...discovered, capabilities: { tools: {}, extensions: { [extensionId]: {} } } } }
  )

describe("resultType where the request path does not see the result", () => {
  it.effect("the result tasks/get inlines for a completed task is checked", () =>
    Effect.gen(function* () {
      // Beside it, a complete inner result is the call's result.
      const fine = yield* taskServer({ resultType: "complete", ...text })
      const followed = yield* Effect.forkChild(fine.callTool("slow"), { startImmediately: true })
      yield* TestClock.adjust(100)
      assert.deepStrictEqual((yield* Fiber.join(followed)).content, text.content)

      const client = yield* taskServer({ resultType: "weird", ...text })
      const call = yield* Effect.forkChild(Effect.flip(client.callTool("slow")), { startImmediately: true })
      yield* TestClock.adjust(100)
      assertUnrecognized(yield* Fiber.join(call), "tasks/get")
      assertUnrecognized(yield* Effect.flip(client.tasks.result("task-1")), "tasks/get")
      const run = yield* Effect.forkChild(Effect.flip(Stream.runDrain(client.tasks.run("slow"))), {
        startImmediately: true
      })
      yield* TestClock.adjust(100)
      assertUnrecognized(yield* Fiber.join(run), "tasks/get")
    })
  )

  it.effect("the result that ends a subscriptions/listen is checked", () =>
    Effect.gen(function* () {
      const listening = {
        ...discovered,
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true } }
      }
      const acknowledge = (request: JsonRpc.Request): ReadonlyArray<JsonRpc.Message> =>
        request.method === "subscriptions/listen"
          ? [
              {
                jsonrpc: "2.0",
                method: "notifications/subscriptions/acknowledged",
                params: { _meta: { "io.modelcontextprotocol/subscriptionId": request.id } }
              } as JsonRpc.Message
            ]
          : []
      // Beside it, a listen the server ends with a complete result ends its Stream.
      const fine = yield* against(() => ({ resultType: "complete" }), { discover: listening, before: acknowledge })
      yield* Stream.runDrain(fine.toolListChanged)

      const client = yield* against(() => ({ resultType: "weird" }), { discover: listening, before: acknowledge })
      assertUnrecognized(yield* Effect.flip(Stream.runDrain(client.toolListChanged)), "subscriptions/listen")
      assertUnrecognized(
        yield* Effect.flip(Stream.runDrain(client.resourceUpdates("notes://a"))),
        "subscriptions/listen"
      )
      // Ended before any acknowledgement, too.
      const unacknowledged = yield* against(() => ({ resultType: "weird" }), { discover: listening })
      assertUnrecognized(yield* Effect.flip(Stream.runDrain(unacknowledged.toolListChanged)), "subscriptions/listen")
    })
  )

  it.effect("the server/discover answer of the handshake is checked", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(against(() => text, { discover: { ...discovered, resultType: "weird" } }))
      assert.instanceOf(error, ClientSession.InitializeError)
      assert.strictEqual(error.reason, "Rejected")
      assertUnrecognized(error.cause, "server/discover")
    })
  )
})
