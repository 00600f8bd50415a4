import { assert, describe, it } from "@effect/vitest"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import * as AiTool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as AiToolkit from "../src/AiToolkit.ts"
import * as Consent from "../src/Consent.ts"
import * as McpHost from "../src/McpHost.ts"
import * as ToolkitServer from "../src/ToolkitServer.ts"
import {
  adder as toolAdder,
  clientInfo,
  configOf,
  echoServer,
  listensForTools,
  type Memory,
  memory
} from "./fixtures.ts"

const textOfBlocks = (result: { readonly content: ReadonlyArray<unknown> }) =>
  result.content.map((block) => (block as { readonly text?: string }).text ?? "").join("")

/** What the scripted model was offered on each turn. */
interface Turn {
  readonly tools: ReadonlyArray<{
    readonly name: string
    readonly description: string | undefined
    readonly schema: unknown
  }>
  readonly results: ReadonlyArray<Prompt.ToolResultPart>
}

/**
 * A language model with no network: on a prompt holding no tool result it
 * asks for `call`; once the prompt holds the tool's result, it finishes with
 * text quoting what it received (so the test sees what the model saw).
 */
const scripted = (call: { readonly name: string; readonly params: unknown }) => {
  const turns: Array<Turn> = []
  const reply = (options: LanguageModel.ProviderOptions): ReadonlyArray<Response.PartEncoded> => {
    const results = options.prompt.content.flatMap((message) =>
      message.role === "tool"
        ? message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
        : []
    )
    turns.push({
      tools: options.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        schema: AiTool.getJsonSchema(tool)
      })),
      results
    })
    if (results.length === 0) return [{ type: "tool-call", id: "call-1", name: call.name, params: call.params }]
    const last = results[results.length - 1]!
    return [{ type: "text", text: `${last.isFailure ? "failed" : "got"}: ${JSON.stringify(last.result)}` }]
  }
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) => Effect.sync(() => [...reply(options)]),
      // Streams the same reply; only its tool calls are streamed as they are (text is not needed by the tests).
      streamText: (options) =>
        Stream.suspend(() =>
          Stream.fromIterable(
            reply(options).filter((part): part is Response.ToolCallPartEncoded => part.type === "tool-call")
          )
        )
    })
  )
  return { turns, layer }
}

/** The conversation a tool-using caller has: ask, let the toolkit answer the call, ask again with the result. */
const converse = (question: string) =>
  Effect.gen(function* () {
    const toolkit = AiToolkit.toolkit()
    const first = yield* LanguageModel.generateText({ prompt: question, toolkit })
    const prompt = Prompt.concat(Prompt.make(question), Prompt.fromResponseParts(first.content))
    const second = yield* LanguageModel.generateText({ prompt, toolkit })
    return { first, second }
  })

const adder = Tool.make("add", {
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  output: Schema.Struct({ sum: Schema.Number }),
  annotations: { readOnlyHint: true },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const failing = Tool.make("fail", {
  description: "Always reports an error",
  input: Schema.Struct({}),
  handler: () => Effect.succeed({ content: [{ type: "text" as const, text: "disk full" }], isError: true })
})

const blocks = Tool.make("blocks", {
  description: "Answers with several blocks",
  input: Schema.Struct({}),
  handler: () =>
    Effect.succeed([
      { type: "text" as const, text: "one" },
      { type: "image" as const, data: "AAAA", mimeType: "image/png" },
      { type: "text" as const, text: "two" }
    ])
})

/**
 * Runs `effect` with a host over in-memory servers `a` (echo, add, fail, blocks; or `options.a`) and `b` (echo),
 * once both are ready; `effect` may be a function of the servers.
 */
const withHost = <A, E>(
  effect:
    | Effect.Effect<A, E, McpHost.McpHost | LanguageModel.LanguageModel>
    | ((servers: Memory) => Effect.Effect<A, E, McpHost.McpHost | LanguageModel.LanguageModel>),
  model: Layer.Layer<LanguageModel.LanguageModel>,
  options: {
    readonly revision?: "2025-06-18" | "2025-11-25"
    readonly a?: Layer.Layer<McpServer.McpServer>
    readonly consent?: Layer.Layer<Consent.Consent>
  } = {}
) =>
  Effect.gen(function* () {
    const servers = yield* memory({ a: options.a ?? echoServer("a", adder, failing, blocks), b: echoServer("b") })
    const host = McpHost.layer({
      clientInfo,
      config: configOf("a", "b"),
      ...(options.revision === undefined ? {} : { client: { supportedVersions: [options.revision] } })
    }).pipe(Layer.provide([servers.connector, options.consent ?? Layer.empty]))
    return yield* Effect.gen(function* () {
      const h = yield* McpHost.McpHost
      yield* Effect.all([h.awaitReady("a"), h.awaitReady("b")])
      return yield* typeof effect === "function" ? effect(servers) : effect
    }).pipe(Effect.provide(Layer.merge(host, model)))
  })

describe("AiToolkit", () => {
  it.effect("a scripted model calls an MCP tool through the host, receives its structured result, and finishes", () =>
    Effect.gen(function* () {
      const model = scripted({ name: "a__add", params: { a: 2, b: 3 } })
      const { first, second } = yield* withHost(converse("what is 2 + 3?"), model.layer)
      // The model was offered every catalog tool under its catalog name, with the server's description and schema.
      const offered = model.turns[0]!.tools
      assert.deepStrictEqual(offered.map((t) => t.name).sort(), [
        "a__add",
        "a__blocks",
        "a__echo",
        "a__fail",
        "b__echo"
      ])
      const add = offered.find((t) => t.name === "a__add")!
      assert.strictEqual(add.description, "Adds two numbers")
      const schema = add.schema as { readonly type: string; readonly properties: object; readonly $schema?: string }
      assert.strictEqual(schema.type, "object")
      assert.deepStrictEqual(Object.keys(schema.properties), ["a", "b"])
      assert.isUndefined(schema.$schema)
      // The call was answered by the MCP server; the model saw the structured content.
      assert.strictEqual(first.toolResults.length, 1)
      assert.isFalse(first.toolResults[0]!.isFailure)
      assert.deepStrictEqual(first.toolResults[0]!.result, { sum: 5 })
      assert.strictEqual(second.text, `got: {"sum":5}`)
    })
  )

  it.effect("text blocks are joined, other blocks named; the tool's annotations carry over", () =>
    Effect.gen(function* () {
      const echo = scripted({ name: "b__echo", params: { text: "hello" } })
      assert.strictEqual((yield* withHost(converse("echo hello"), echo.layer)).second.text, `got: "b: hello"`)
      const model = scripted({ name: "a__blocks", params: {} })
      const { first } = yield* withHost(converse("blocks"), model.layer)
      assert.strictEqual(first.toolResults[0]!.result, "one\n[image image/png]\ntwo")
      const snapshot = yield* withHost(AiToolkit.snapshot(), model.layer)
      const add = snapshot.toolkit.tools.a__add!
      assert.isTrue(add.annotations.mapUnsafe.get(AiTool.Readonly.key) === true)
    })
  )

  it.effect("an isError result is a failure result the model sees", () =>
    Effect.gen(function* () {
      const model = scripted({ name: "a__fail", params: {} })
      const { first, second } = yield* withHost(converse("try it"), model.layer)
      const result = first.toolResults[0]!
      assert.isTrue(result.isFailure)
      const failure = result.result as AiToolkit.ToolFailure
      assert.strictEqual(failure._tag, "ToolFailure")
      assert.strictEqual(failure.reason, "ToolError")
      assert.strictEqual(failure.message, "disk full")
      assert.include(second.text, `failed: `)
      assert.include(second.text, `"message":"disk full"`)
    })
  )

  // Refused as -32602 before 2025-11-25, as an isError result from it on: the model sees both as a failure.
  for (const [revision, reason] of [
    ["2025-06-18", "InvalidParams"],
    ["2025-11-25", "ToolError"]
  ] as const)
    it.effect(`${revision}: invalid arguments come back to the model as the server's refusal (${reason})`, () =>
      Effect.gen(function* () {
        const model = scripted({ name: "a__add", params: { a: "two" } })
        const { first, second } = yield* withHost(converse("add"), model.layer, { revision })
        const result = first.toolResults[0]!
        assert.isTrue(result.isFailure)
        const failure = result.result as AiToolkit.ToolFailure
        assert.strictEqual(failure.reason, reason)
        assert.include(failure.message, "a: Expected number")
        assert.include(failure.message, "b: Missing key")
        assert.include(second.text, "failed: ")
      })
    )

  it.effect("the toolkit follows the catalog: a tool listed after list_changed is offered on the next call", () =>
    Effect.gen(function* () {
      const model = scripted({ name: "a__add_tool", params: {} })
      const toolkit = AiToolkit.toolkit()
      yield* withHost(
        (servers) =>
          Effect.gen(function* () {
            const host = yield* McpHost.McpHost
            const before = yield* toolkit
            assert.strictEqual(yield* toolkit, before, "rebuilt only when the catalog changes")
            // The host speaks 2026-07-28: list_changed comes on a `subscriptions/listen` stream, live once
            // the server acknowledged it.
            assert.strictEqual((yield* host.awaitReady("a")).revision, "2026-07-28")
            yield* servers.received("a", listensForTools)
            const first = yield* LanguageModel.generateText({ prompt: "add a tool", toolkit })
            assert.deepStrictEqual(first.toolResults[0]!.result, "added")
            // The server said its list changed: the host lists again and publishes the new catalog.
            yield* host.catalogChanges.pipe(
              Stream.filter((catalog) => catalog.tools.some((entry) => entry.name === "a__added")),
              Stream.runHead
            )
            yield* LanguageModel.generateText({ prompt: "again", toolkit })
            const after = yield* toolkit
            assert.notStrictEqual(after, before)
            assert.isDefined(after.tools.a__added)
          }),
        model.layer,
        { a: Layer.provideMerge(toolAdder, echoServer("a")) }
      )
      assert.deepStrictEqual(model.turns[0]!.tools.map((t) => t.name).sort(), ["a__add_tool", "a__echo", "b__echo"])
      assert.deepStrictEqual(model.turns[1]!.tools.map((t) => t.name).sort(), [
        "a__add_tool",
        "a__added",
        "a__echo",
        "b__echo"
      ])
    })
  )

  it.effect("a call past its timeout is a RequestTimeout failure the model sees, and is cancelled on its server", () =>
    Effect.gen(function* () {
      const cancelled = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const slow = Tool.make("slow", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.andThen(
            Deferred.succeed(started, undefined),
            Effect.sleep("1 minute").pipe(
              Effect.as("late"),
              Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined))
            )
          )
      })
      const model = scripted({ name: "a__slow", params: {} })
      const question = "slow?"
      const run = Effect.gen(function* () {
        const toolkit = AiToolkit.toolkit({ call: { timeout: "5 seconds" } })
        const fiber = yield* Effect.forkChild(LanguageModel.generateText({ prompt: question, toolkit }))
        // The call is on the server (and its timeout running) before time moves.
        yield* Deferred.await(started)
        yield* TestClock.adjust("6 seconds")
        const first = yield* Fiber.join(fiber)
        yield* Deferred.await(cancelled)
        return first
      })
      const first = yield* withHost(run, model.layer, { a: echoServer("a", slow) })
      const result = first.toolResults[0]!
      assert.isTrue(result.isFailure)
      assert.strictEqual((result.result as AiToolkit.ToolFailure).reason, "RequestTimeout")
    })
  )

  it.effect("interrupting generateText cancels the MCP call on its server", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const cancelled = yield* Deferred.make<void>()
      const slow = Tool.make("slow", {
        input: Schema.Struct({}),
        handler: () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(cancelled, undefined))
          )
      })
      const model = scripted({ name: "a__slow", params: {} })
      const run = Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(LanguageModel.generateText({ prompt: "?", toolkit: AiToolkit.toolkit() }))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        yield* Deferred.await(cancelled)
      })
      yield* withHost(run, model.layer, { a: echoServer("a", slow) })
      assert.isTrue(yield* Deferred.isDone(cancelled))
    })
  )

  it.effect("a snapshot merges with a toolkit of the application's own; filter chooses the MCP tools", () =>
    Effect.gen(function* () {
      const Clock = AiTool.make("clock", { success: Schema.String })
      const Own = Toolkit.make(Clock)
      const OwnHandlers = Own.toLayer({ clock: () => Effect.succeed("noon") })
      const model = scripted({ name: "a__add", params: { a: 1, b: 1 } })
      const run = Effect.gen(function* () {
        const { handlers, toolkit } = yield* AiToolkit.snapshot({ filter: (entry) => entry.server === "a" })
        const merged = Toolkit.merge(Own, toolkit)
        const withHandler = yield* merged.pipe(Effect.provide(OwnHandlers), Effect.provideContext(handlers))
        return yield* LanguageModel.generateText({ prompt: "1 + 1", toolkit: withHandler })
      })
      const first = yield* withHost(run, model.layer)
      assert.deepStrictEqual(model.turns[0]!.tools.map((t) => t.name).sort(), [
        "a__add",
        "a__blocks",
        "a__echo",
        "a__fail",
        "clock"
      ])
      assert.deepStrictEqual(first.toolResults[0]!.result, { sum: 2 })
    })
  )

  it.effect("with progress, a call's progress updates are preliminary results of streamText", () =>
    Effect.gen(function* () {
      const steps = Tool.make("steps", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            yield* ServerRequest.progress({ progress: 1, total: 2, message: "half" })
            yield* ServerRequest.progress({ progress: 2, total: 2 })
            return "done"
          })
      })
      const model = scripted({ name: "a__steps", params: {} })
      const parts = yield* withHost(
        Stream.runCollect(LanguageModel.streamText({ prompt: "go", toolkit: AiToolkit.toolkit({ progress: true }) })),
        model.layer,
        { a: echoServer("a", steps) }
      )
      const results = parts.filter((part) => part.type === "tool-result")
      assert.deepStrictEqual(
        // As JSON: a key whose value is undefined is not part of what a model or a UI gets.
        JSON.parse(JSON.stringify(results.map((part) => [part.preliminary, part.result]))),
        [
          [true, { progress: 1, total: 2, message: "half" }],
          [true, { progress: 2, total: 2 }],
          [false, "done"]
        ]
      )
    })
  )

  it.effect("a call the consent hook declines is a HostError failure the model sees; nothing is sent", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const consent = Consent.layer({
        toolCall: (call) => Effect.sync(() => asked.push(call.name)).pipe(Effect.as(call.name !== "a__add"))
      })
      const model = scripted({ name: "a__add", params: { a: 1, b: 2 } })
      const { first, second } = yield* withHost(converse("1 + 2"), model.layer, { consent })
      assert.deepStrictEqual(asked, ["a__add"])
      const failure = first.toolResults[0]!.result as AiToolkit.ToolFailure
      assert.isTrue(first.toolResults[0]!.isFailure)
      assert.strictEqual(failure.reason, "HostError")
      assert.include(failure.message, "declined")
      assert.include(second.text, "failed: ")
    })
  )

  it.effect("a tool the toolkit does not have fails generateText with a typed AiError", () =>
    Effect.gen(function* () {
      const model = scripted({ name: "nope", params: {} })
      const error = yield* withHost(Effect.flip(converse("?")), model.layer)
      assert.strictEqual(error._tag, "AiError")
    })
  )
})

class CityNotFound extends Schema.TaggedError<CityNotFound>()("CityNotFound", { city: Schema.String }) {}

const Forecast = AiTool.make("forecast", {
  description: "Tomorrow's forecast for a city",
  parameters: Schema.Struct({ city: Schema.String, days: Schema.optional(Schema.Number) }),
  success: Schema.Struct({ city: Schema.String, summary: Schema.String }),
  failure: CityNotFound
})
  .annotate(AiTool.Title, "Forecast")
  .annotate(AiTool.Readonly, true)

const Shout = AiTool.make("shout", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String,
  failure: CityNotFound,
  failureMode: "return"
})

const Crash = AiTool.make("crash", { description: "A handler with a bug" })

const Raw = AiTool.dynamic("raw", {
  description: "Parameters as a JSON Schema",
  parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] }
})

// A parameter whose JSON form (an ISO string) differs from its encoded form (a Date).
const Remind = AiTool.make("remind", {
  parameters: Schema.Struct({ at: Schema.Date }),
  success: Schema.String
})

const Weather = Toolkit.make(Forecast, Shout, Crash, Raw, Remind)

const WeatherHandlers = Weather.toLayer({
  forecast: ({ city }) =>
    city === "Atlantis" ? Effect.fail(new CityNotFound({ city })) : Effect.succeed({ city, summary: "sunny" }),
  shout: ({ text }) => (text === "" ? Effect.fail(new CityNotFound({ city: "" })) : Effect.succeed(text.toUpperCase())),
  crash: () => Effect.die(new Error("secret stack detail")),
  raw: (params) => Effect.succeed({ got: params }),
  remind: ({ at }) => Effect.succeed(`at ${at.getUTCFullYear()}`)
})

const WeatherServer = ToolkitServer.layer(Weather).pipe(
  Layer.provide(WeatherHandlers),
  Layer.provideMerge(McpServer.layer({ name: "weather", version: "1.0.0" }))
)

describe("ToolkitServer", () => {
  it.effect("lists a toolkit's tools with their JSON Schemas, descriptions and annotations", () =>
    Effect.gen(function* () {
      const { client } = yield* McpTest.connect(WeatherServer)
      const { tools } = yield* client.listTools()
      assert.deepStrictEqual(tools.map((t) => t.name).sort(), ["crash", "forecast", "raw", "remind", "shout"])
      const forecast = tools.find((t) => t.name === "forecast")!
      assert.strictEqual(forecast.description, "Tomorrow's forecast for a city")
      assert.strictEqual(forecast.title, "Forecast")
      assert.deepStrictEqual(forecast.annotations, { readOnlyHint: true })
      const input = forecast.inputSchema as {
        readonly type: string
        readonly properties: object
        readonly required: unknown
      }
      assert.strictEqual(input.type, "object")
      assert.deepStrictEqual(Object.keys(input.properties), ["city", "days"])
      assert.deepStrictEqual(input.required, ["city"])
      assert.strictEqual((forecast.outputSchema as { readonly type: string }).type, "object")
      // A string success has no object schema to advertise.
      assert.isUndefined(tools.find((t) => t.name === "shout")!.outputSchema)
      const raw = tools.find((t) => t.name === "raw")!
      assert.deepStrictEqual((raw.inputSchema as { readonly required: unknown }).required, ["n"])
    })
  )

  it.effect("results are structuredContent plus JSON text, or the text of a string", () =>
    Effect.gen(function* () {
      const { client } = yield* McpTest.connect(WeatherServer)
      const forecast = yield* client.callTool("forecast", { city: "Paris" })
      assert.deepStrictEqual(forecast.structuredContent, { city: "Paris", summary: "sunny" })
      assert.deepStrictEqual(forecast.content, [{ type: "text", text: `{"city":"Paris","summary":"sunny"}` }])
      assert.notStrictEqual(forecast.isError, true)
      const shout = yield* client.callTool("shout", { text: "hi" })
      assert.deepStrictEqual(shout.content, [{ type: "text", text: "HI" }])
      assert.isUndefined(shout.structuredContent)
      const raw = yield* client.callTool("raw", { n: 3 })
      assert.deepStrictEqual(raw.structuredContent, { got: { n: 3 } })
      const remind = yield* client.callTool("remind", { at: "2030-05-01T00:00:00.000Z" })
      assert.deepStrictEqual(remind.content, [{ type: "text", text: "at 2030" }])
    })
  )

  it.effect("typed failures are isError results carrying the encoded failure; a defect's message never leaves", () =>
    Effect.gen(function* () {
      const { client } = yield* McpTest.connect(WeatherServer)
      // failureMode "error": the handler's failure, encoded by the failure Schema.
      const failed = yield* client.callTool("forecast", { city: "Atlantis" })
      assert.isTrue(failed.isError)
      assert.deepStrictEqual(failed.content, [{ type: "text", text: `{"_tag":"CityNotFound","city":"Atlantis"}` }])
      // Not as structuredContent: the tool's outputSchema describes its successes only.
      assert.isUndefined(failed.structuredContent)
      // failureMode "return": the returned failure.
      const returned = yield* client.callTool("shout", { text: "" })
      assert.isTrue(returned.isError)
      assert.deepStrictEqual(returned.structuredContent, { _tag: "CityNotFound", city: "" })
      const crashed = yield* client.callTool("crash", {})
      assert.isTrue(crashed.isError)
      const text = JSON.stringify(crashed.content)
      assert.include(text, "Internal error")
      assert.notInclude(text, "secret stack detail")
    })
  )

  it.effect("preliminary results are progress notifications with the encoded value as message", () =>
    Effect.gen(function* () {
      const Count = AiTool.make("count", { success: Schema.Number })
      const Counting = Toolkit.make(Count)
      const handlers = Counting.toLayer({
        count: (_, context) =>
          Effect.gen(function* () {
            yield* context.preliminary(1)
            yield* context.preliminary(2)
            return 3
          })
      })
      const server = ToolkitServer.layer(Counting).pipe(
        Layer.provide(handlers),
        Layer.provideMerge(McpServer.layer({ name: "counting", version: "1.0.0" }))
      )
      const { client } = yield* McpTest.connect(server)
      const events = yield* Stream.runCollect(client.callToolWithProgress("count", {}))
      assert.deepStrictEqual(
        events.map((event) =>
          event._tag === "Progress" ? `${event.update.progress}:${event.update.message}` : textOfBlocks(event.value)
        ),
        ["1:1", "2:2", "3"]
      )
    })
  )

  for (const [revision, refused] of [
    ["2025-06-18", "InvalidParams"],
    ["2025-11-25", "isError"]
  ] as const)
    it.effect(`${revision}: invalid arguments are refused as ${refused}; an unknown tool as a protocol error`, () =>
      Effect.gen(function* () {
        let ran = false
        const Counting = Weather.toLayer({
          forecast: ({ city }) => Effect.sync(() => (ran = true)).pipe(Effect.as({ city, summary: "?" })),
          shout: ({ text }) => Effect.succeed(text),
          crash: () => Effect.void,
          raw: () => Effect.succeed(null),
          remind: () => Effect.succeed("")
        })
        const server = ToolkitServer.layer(Weather).pipe(
          Layer.provide(Counting),
          Layer.provideMerge(McpServer.layer({ name: "weather", version: "1.0.0" }))
        )
        const { client } = yield* McpTest.connect(server, { revision })
        const invalid = yield* Effect.result(client.callTool("forecast", { city: 42 }))
        if (refused === "InvalidParams") {
          assert.isTrue(invalid._tag === "Failure" && invalid.failure._tag === "InvalidParams")
        } else {
          assert.isTrue(invalid._tag === "Success" && invalid.success.isError === true)
          assert.include(JSON.stringify(invalid._tag === "Success" ? invalid.success.content : ""), "city")
        }
        assert.isFalse(ran, "the handler does not run on invalid arguments")
        const unknown = yield* Effect.flip(client.callTool("nowhere", {}))
        assert.strictEqual(unknown._tag, "InvalidParams")
      })
    )

  it.effect("round trip: a scripted model drives a served toolkit through McpHost and AiToolkit", () =>
    Effect.gen(function* () {
      const model = scripted({ name: "a__forecast", params: { city: "Oslo" } })
      const { first, second } = yield* withHost(converse("weather in Oslo?"), model.layer, {
        a: Layer.provideMerge(ToolkitServer.layer(Weather).pipe(Layer.provide(WeatherHandlers)), echoServer("a"))
      })
      assert.deepStrictEqual(first.toolResults[0]!.result, { city: "Oslo", summary: "sunny" })
      assert.strictEqual(second.text, `got: {"city":"Oslo","summary":"sunny"}`)
    })
  )
})
