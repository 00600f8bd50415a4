/**
 * Client -> server progress (issue 12, found under attack 6, client half):
 * a handler answering a server request reports progress for it with
 * HandlerProgress.report, which reaches the server's request when it asked
 * for progress, and goes nowhere otherwise.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as HandlerProgress from "@effect-mcp/client/HandlerProgress"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as SamplingParams from "@effect-mcp/protocol/Sampling"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { ServerControl } from "./fixtures.ts"
import { clientInfo, connect } from "./fixtures.ts"

type Params = { readonly [key: string]: unknown }

/**
 * A tool that asks the client (`arguments.method`), with a progress handler
 * when `arguments.progress` is true, and answers with the client's answer
 * and the progress it saw. On 2026-07-28 it asks through `input_required`.
 */
const askTool =
  (control: ServerControl): Session.Handler =>
  (p, info) =>
    Effect.gen(function* () {
      const params = p as Params
      const args = (params.arguments ?? {}) as Params
      const method = String(args.method)
      const asked = args.params as object
      if (info.revision.stateless) {
        if (params.inputResponses === undefined) {
          return { resultType: "input_required", inputRequests: { q: { method, params: asked } }, requestState: "s" }
        }
        return { content: [{ type: "text", text: JSON.stringify({ answer: params.inputResponses, progress: [] }) }] }
      }
      const progress: Array<CurrentRequest.ProgressUpdate> = []
      const answer = yield* control
        .session()
        .request(method, asked, args.progress === true ? { onProgress: (update) => progress.push(update) } : undefined)
        .pipe(Effect.catch((e) => Effect.fail(new McpError.InternalError({ message: `${e._tag}: ${e.message}` }))))
      return { content: [{ type: "text", text: JSON.stringify({ answer, progress }) }] }
    })

const server = { handlers: [["tools/call", askTool] as const] }

const resultOf = (result: { readonly content: ReadonlyArray<{ readonly type: string }> }) =>
  JSON.parse((result.content[0] as unknown as { readonly text: string }).text) as {
    readonly answer: Params
    readonly progress: ReadonlyArray<CurrentRequest.ProgressUpdate>
  }

/** Whether the handler saw a request for progress, per call. */
const asked: Array<boolean> = []

const sampling = SamplingHandler.layer((params) =>
  Effect.gen(function* () {
    asked.push(yield* HandlerProgress.requested)
    yield* HandlerProgress.report({ progress: 1, total: 2, message: "half way" })
    yield* HandlerProgress.report({ progress: 1, total: 2, message: "not increasing: dropped" })
    yield* HandlerProgress.report({ progress: 2, total: 2 })
    return {
      role: "assistant" as const,
      content: { type: "text" as const, text: `${params.messages.length} messages` },
      model: "test-model",
      stopReason: "endTurn"
    }
  })
)

const samplingParams: SamplingParams.CreateMessageParams = {
  messages: [{ role: "user", content: { type: "text", text: "hi" } }],
  maxTokens: 5
}

describe("HandlerProgress", () => {
  it.effect("2025-11-25: a sampling handler's progress reaches the server request that asked for it", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25", { server, handlers: sampling })
      asked.length = 0
      const result = resultOf(
        yield* client.callTool("ask", { method: "sampling/createMessage", params: samplingParams, progress: true })
      )
      assert.deepStrictEqual(asked, [true])
      assert.strictEqual((result.answer.content as Params).text, "1 messages")
      assert.deepStrictEqual(result.progress, [
        { progress: 1, total: 2, message: "half way" },
        { progress: 2, total: 2 }
      ])
    })
  )

  it.effect("2025-11-25: without a progress token nothing is sent, and the answer is unchanged", () =>
    Effect.gen(function* () {
      const { client, wire } = yield* connect("2025-11-25", { server, handlers: sampling })
      asked.length = 0
      const result = resultOf(
        yield* client.callTool("ask", { method: "sampling/createMessage", params: samplingParams })
      )
      assert.deepStrictEqual(asked, [false])
      assert.strictEqual((result.answer.content as Params).text, "1 messages")
      assert.notInclude(wire.methods(), "notifications/progress")
    })
  )

  it.effect("2025-11-25: an elicitation handler reports progress the same way", () =>
    Effect.gen(function* () {
      const elicitation = ElicitationHandler.layer({
        form: () =>
          Effect.andThen(
            HandlerProgress.report({ progress: 50, total: 100, message: "user typing" }),
            Effect.succeed({ action: "accept" as const, content: { name: "Ada" } })
          )
      })
      const { client } = yield* connect("2025-11-25", { server, handlers: elicitation })
      const result = resultOf(
        yield* client.callTool("ask", {
          method: "elicitation/create",
          params: {
            message: "Name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } } }
          },
          progress: true
        })
      )
      assert.deepStrictEqual(result.answer, { action: "accept", content: { name: "Ada" } })
      assert.deepStrictEqual(result.progress, [{ progress: 50, total: 100, message: "user typing" }])
    })
  )

  it.effect(
    "2026-07-28: an input request answered inside the client's call reports nowhere, not even to a request its caller serves",
    () =>
      Effect.gen(function* () {
        const { client, wire } = yield* connect("2026-07-28", { server, handlers: sampling })
        asked.length = 0
        const outer: Array<CurrentRequest.ProgressUpdate> = []
        // The caller itself serving a request (a proxy, say): the handler's progress must not land there.
        const caller = CurrentRequest.CurrentRequest.of({
          id: "outer",
          method: "tools/call",
          progressToken: "outer",
          progress: (update) => Effect.sync(() => outer.push(update)),
          notify: () => Effect.void,
          principal: undefined,
          sessionId: undefined
        })
        const result = resultOf(
          yield* client
            .callTool("ask", { method: "sampling/createMessage", params: samplingParams, progress: true })
            .pipe(Effect.provideService(CurrentRequest.CurrentRequest, caller))
        )
        assert.deepStrictEqual(asked, [false])
        assert.deepStrictEqual(outer, [])
        assert.notInclude(wire.methods(), "notifications/progress")
        assert.strictEqual(((result.answer.q as Params).content as Params).text, "1 messages")
      })
  )

  it.effect("2025-11-25: end to end with McpServer, whose ask takes the progress as it comes", () =>
    Effect.gen(function* () {
      const summarize = Tool.make("summarize", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            const seen: Array<CurrentRequest.ProgressUpdate> = []
            yield* Sampling.createMessage(samplingParams, {
              onProgress: (update) => seen.push(update)
            }).pipe(Effect.orDie)
            return JSON.stringify(seen)
          })
      })
      const { client } = yield* McpTest.connect(
        Layer.provideMerge(Tool.layer(summarize), McpServer.layer({ name: "asks", version: "1.0.0" })),
        { revision: "2025-11-25", clientInfo, clientHandlers: sampling }
      )
      const result = yield* client.callTool("summarize", {})
      const block = result.content[0]
      assert.deepStrictEqual(JSON.parse(block?.type === "text" ? block.text : "null"), [
        { progress: 1, total: 2, message: "half way" },
        { progress: 2, total: 2 }
      ])
    })
  )
})
