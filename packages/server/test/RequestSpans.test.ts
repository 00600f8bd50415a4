/**
 * The SERVER span of a traced request, as McpServer has it named and ended:
 * a tool or prompt the server has names the span (`tools/call echo`), a name
 * the client made up does not (the span is `tools/call`, so a client cannot
 * make span names without bound; the name it asked for stays in
 * `gen_ai.tool.name`); and a `tools/call` answered with `isError: true` ends
 * with status ERROR on both sides, as the OpenTelemetry conventions for MCP ask.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Tracer from "effect/Tracer"
import { type Obj, testServer } from "./fixtures.ts"

const echo = Tool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

class Boom extends Schema.TaggedError<Boom>()("Boom", { message: Schema.String }) {}

/** A tool whose failure is answered as a result with `isError: true`. */
const broken = Tool.make("broken", {
  input: Schema.Struct({}),
  handler: () => Effect.fail(new Boom({ message: "the disk is full" }))
})

const greet = Prompt.make({ name: "greet", handler: () => Effect.succeed("hello") })

const late = Tool.make("late", { input: Schema.Struct({}), handler: () => Effect.succeed("here") })

const features = Layer.mergeAll(Tool.layer(echo, broken), Prompt.layer(greet))

const served = (recorder: SpanRecorder.SpanRecorder, method: string): ReadonlyArray<Tracer.NativeSpan> =>
  recorder.spans.filter((span) => span.kind === "server" && span.name.startsWith(method))

/** The span's end: its exit (a failure is status ERROR for an exporter). */
const exitOf = (span: Tracer.NativeSpan): Exit.Exit<unknown, unknown> => {
  assert.strictEqual(span.status._tag, "Ended", span.name)
  return (span.status as Extract<Tracer.SpanStatus, { readonly _tag: "Ended" }>).exit
}

describe("request spans of an McpServer", () => {
  it.effect("a span names only a tool or prompt the server has", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      const { request, context } = yield* McpTest.connectRaw(testServer(features))
      yield* request("tools/call", { name: "echo", arguments: { text: "hi" } })
      yield* request("prompts/get", { name: "greet" })
      // Made-up names: each refused (-32602), none a span name of its own.
      for (let i = 0; i < 20; i++) {
        yield* Effect.flip(request("tools/call", { name: `made-up-${i}`, arguments: {} }))
        yield* Effect.flip(request("prompts/get", { name: `made-up-${i}` }))
      }
      // Looked up as each span starts: a tool registered later names its spans too.
      yield* Tool.register(late).pipe(Effect.provideContext(context))
      yield* request("tools/call", { name: "late", arguments: {} })

      const toolSpans = served(recorder, "tools/call")
      const promptSpans = served(recorder, "prompts/get")
      assert.deepStrictEqual(
        [...new Set(toolSpans.map((span) => span.name))].sort(),
        ["tools/call", "tools/call echo", "tools/call late"],
        "old code: one span name per made-up tool"
      )
      assert.deepStrictEqual([...new Set(promptSpans.map((span) => span.name))].sort(), [
        "prompts/get",
        "prompts/get greet"
      ])
      // The name asked for stays an attribute of the span (not of any metric).
      const madeUp = toolSpans.filter((span) => span.name === "tools/call")
      assert.strictEqual(madeUp.length, 20)
      assert.strictEqual(madeUp[3]!.attributes.get("gen_ai.tool.name"), "made-up-3")
      assert.strictEqual(madeUp[3]!.attributes.get("gen_ai.operation.name"), "execute_tool")
      assert.strictEqual(madeUp[3]!.attributes.get("error.type"), "-32602")
      const unknownPrompt = promptSpans.find((span) => span.name === "prompts/get")!
      assert.strictEqual(unknownPrompt.attributes.get("gen_ai.prompt.name"), "made-up-0")
      assert.strictEqual(recorder.named("tools/call echo", "server").attributes.get("gen_ai.tool.name"), "echo")
      // The client named its own spans after what it asked for: its choice, not the server's.
      assert.strictEqual(
        recorder.spans.filter((span) => span.kind === "client" && span.name === "tools/call made-up-3").length,
        1
      )
    }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
  })

  it.effect("a tools/call answered with isError: true ends its spans with status ERROR", () => {
    const recorder = SpanRecorder.make()
    return Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features))
      const result = (yield* request("tools/call", { name: "broken", arguments: {} })) as Obj
      assert.isTrue(result.isError)
      yield* request("tools/call", { name: "echo", arguments: { text: "hi" } })

      for (const kind of ["server", "client"] as const) {
        const failed = recorder.named("tools/call broken", kind)
        assert.strictEqual(failed.attributes.get("error.type"), "tool_error", kind)
        const exit = exitOf(failed)
        assert.isTrue(Exit.isFailure(exit), `${kind}: old code ended it with the result (status OK)`)
        const error = Cause.squash((exit as Exit.Failure<unknown, unknown>).cause) as {
          _tag?: string
          message?: string
        }
        assert.strictEqual(error._tag, "ToolError", kind)
        // The status description says why; the tool's content (anything at all) stays out of it.
        assert.strictEqual(error.message, "the tool's result has isError: true", kind)
        // A call answered with a plain result stays OK.
        const ok = recorder.named("tools/call echo", kind)
        assert.isTrue(Exit.isSuccess(exitOf(ok)), kind)
        assert.isFalse(ok.attributes.has("error.type"), kind)
      }
    }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
  })
})
