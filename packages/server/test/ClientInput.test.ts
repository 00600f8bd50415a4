import { assert, describe, it } from "@effect/vitest"
import * as Features from "@effect-mcp/protocol/Features"
import type * as Session from "@effect-mcp/engine/Session"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as Roots from "@effect-mcp/server/Roots"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

const clientInfo = { name: "test-client", version: "1.0.0" }

const Person = Schema.Struct({
  name: Schema.String.annotate({ title: "Name" }),
  age: Schema.Finite.annotate({ description: "Age in years" })
})

let runs = 0
let finalized = 0

/** The handler under test: one sampling call, then a form; the same code on every revision. */
const interview = Tool.make("interview", {
  input: Schema.Struct({ topic: Schema.String }),
  handler: ({ topic }) =>
    Effect.gen(function* () {
      runs++
      yield* Effect.addFinalizer(() => Effect.sync(() => finalized++))
      const answer = yield* Sampling.createMessage({
        messages: [{ role: "user", content: { type: "text", text: `Say something about ${topic}` } }],
        maxTokens: 100
      })
      const form = yield* Elicitation.form({ message: "Who are you?", schema: Person })
      if (form.action !== "accept") return `${form.action} after: ${Sampling.text(answer)}`
      return `${form.content.name} (${form.content.age}) heard: ${Sampling.text(answer)}`
    }).pipe(Effect.scoped)
})

const rootsTool = Tool.make("roots", {
  input: Schema.Struct({}),
  handler: () => Effect.map(Roots.list, (roots) => roots.map((r) => r.uri).join(","))
})

const optional = Tool.make("optional", {
  input: Schema.Struct({}),
  handler: () =>
    Elicitation.form({ message: "Anything?", schema: Person }).pipe(
      Effect.map((r) => r.action),
      Effect.catchTag("ClientRequestError", (e) => Effect.succeed(`fallback: ${e.reason}`))
    )
})

const visit = Tool.make("visit", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      const r = yield* Elicitation.url({ message: "Sign in", url: "https://example.com/login" })
      yield* Elicitation.complete(r.elicitationId)
      return `${r.action}:${r.elicitationId === undefined ? "none" : "id"}`
    })
})

const withTools = Tool.make("withTools", {
  input: Schema.Struct({}),
  handler: () =>
    Sampling.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "weather?" } }],
      maxTokens: 10,
      tools: [{ name: "weather", inputSchema: { type: "object" } }],
      toolChoice: { mode: "auto" }
    }).pipe(
      Effect.map((r) => Sampling.text(r)),
      Effect.catchTag("ClientRequestError", (e) => Effect.succeed(`refused: ${e.reason}`))
    )
})

const features = Tool.layer(interview, rootsTool, optional, visit, withTools)

/** What the client side answers, shared by the stateful handlers and the multi-round-trip driver. */
const answers: { readonly [method: string]: (params: Obj) => unknown } = {
  "sampling/createMessage": (params) => ({
    role: "assistant",
    content: { type: "text", text: `echo ${params.messages[0].content.text}` },
    model: "test-model"
  }),
  "elicitation/create": (params) =>
    params.mode === "url" ? { action: "accept" } : { action: "accept", content: { name: "Ada", age: 36 } },
  "roots/list": () => ({ roots: [{ uri: "file:///a" }, { uri: "file:///b" }] })
}

const seen: Array<{ method: string; params: Obj }> = []
const clientHandlers = new Map<string, Session.Handler>(
  Object.entries(answers).map(([method, answer]) => [
    method,
    (params: unknown) =>
      Effect.sync(() => {
        seen.push({ method, params: params as Obj })
        return answer(params as Obj)
      })
  ])
)

const fullCapabilities = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} }
const expected = "Ada (36) heard: echo Say something about effects"

/** Drives a 2026-07-28 request through its input rounds, answering like the stateful client does. */
const driveRounds = (request: (method: string, params?: object) => Effect.Effect<unknown, unknown>, params: Obj) =>
  Effect.gen(function* () {
    let result = (yield* request("tools/call", params)) as Obj
    const rounds: Array<ReadonlyArray<string>> = []
    while (result.resultType === "input_required") {
      const keys = Object.keys(result.inputRequests)
      rounds.push(keys)
      const inputResponses: Record<string, unknown> = {}
      for (const key of keys) {
        const input = result.inputRequests[key]
        inputResponses[key] = answers[input.method]!(input.params ?? {})
      }
      result = (yield* request("tools/call", { ...params, inputResponses, requestState: result.requestState })) as Obj
    }
    return { result, rounds }
  })

describe("asking the client from a handler", () => {
  it.effect("2025-11-25: sampling then elicitation as server-to-client requests", () =>
    Effect.gen(function* () {
      runs = 0
      seen.length = 0
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2025-11-25",
        capabilities: fullCapabilities,
        handlers: clientHandlers
      })
      const result = (yield* request("tools/call", { name: "interview", arguments: { topic: "effects" } })) as Obj
      assert.deepStrictEqual(result.content, [{ type: "text", text: expected }])
      assert.strictEqual(runs, 1)
      assert.deepStrictEqual(
        seen.map((s) => s.method),
        ["sampling/createMessage", "elicitation/create"]
      )
      const form = seen[1]!.params
      assert.strictEqual(form.mode, "form")
      assert.deepStrictEqual(form.requestedSchema.required, ["name", "age"])
      assert.deepStrictEqual(form.requestedSchema.properties.name, { type: "string", title: "Name" })
      assert.strictEqual(form.requestedSchema.properties.age.type, "number")
    })
  )

  it.effect("a form with a field no form can hold is refused before anything is sent", () =>
    Effect.gen(function* () {
      runs = 0
      seen.length = 0
      const nested = Tool.make("nested", {
        input: Schema.Struct({}),
        handler: () =>
          Elicitation.form({
            message: "Where?",
            schema: Schema.Struct({ city: Schema.String, place: Schema.Struct({ street: Schema.String }) })
          }).pipe(Effect.as("asked"))
      })
      const { request } = yield* McpTest.connectRaw(testServer(Tool.layer(nested)), {
        revision: "2025-11-25",
        capabilities: fullCapabilities,
        handlers: clientHandlers
      })
      // A defect of the handler: the client gets a correlation id, never the message, and was asked nothing.
      const result = (yield* request("tools/call", { name: "nested", arguments: {} })) as Obj
      assert.isTrue(result.isError)
      assert.match(result.content[0].text, /^Internal error \(correlation id /)
      assert.deepStrictEqual(seen, [])
      // The message the server's log gets.
      assert.throws(
        () => Elicitation.requestedSchema(Schema.Struct({ place: Schema.Struct({ street: Schema.String }) })),
        'elicitation form: field "place" is of type object'
      )
      assert.throws(
        () => Elicitation.requestedSchema(Schema.Struct({ tags: Schema.Array(Schema.String) })),
        'field "tags" is an array of free values'
      )
      // What a form may hold: every primitive, and a multi-select of enum values.
      const fine = Elicitation.requestedSchema(
        Schema.Struct({
          s: Schema.String,
          n: Schema.Number,
          i: Schema.Int,
          b: Schema.Boolean,
          k: Schema.Literals(["a", "b"]),
          many: Schema.Array(Schema.Literals(["p", "q"]))
        })
      )
      assert.deepStrictEqual(Object.keys(fine.properties), ["s", "n", "i", "b", "k", "many"])
    })
  )

  it.effect("2026-07-28: the same handler runs as multi-round-trip requests", () =>
    Effect.gen(function* () {
      runs = 0
      finalized = 0
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: fullCapabilities
      })
      const { result, rounds } = yield* driveRounds(request, { name: "interview", arguments: { topic: "effects" } })
      assert.deepStrictEqual(rounds, [["sampling-0"], ["elicitation-1"]])
      assert.strictEqual(result.resultType, "complete")
      assert.deepStrictEqual(result.content, [{ type: "text", text: expected }])
      // One run per round; the interrupted runs still ran their finalizers.
      assert.strictEqual(runs, 3)
      assert.strictEqual(finalized, 3)
    })
  )

  it.effect("2026-07-28: the input requests carry what the stateful requests carry", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: fullCapabilities
      })
      const first = (yield* request("tools/call", { name: "interview", arguments: { topic: "effects" } })) as Obj
      assert.strictEqual(first.resultType, "input_required")
      assert.deepStrictEqual(first.inputRequests["sampling-0"], {
        method: "sampling/createMessage",
        params: {
          messages: [{ role: "user", content: { type: "text", text: "Say something about effects" } }],
          maxTokens: 100
        }
      })
      assert.isString(first.requestState)
    })
  )

  it.effect("2026-07-28: a tampered, foreign or misapplied requestState is rejected with -32602", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: fullCapabilities
      })
      const params = { name: "interview", arguments: { topic: "effects" } }
      const first = (yield* request("tools/call", params)) as Obj
      const state: string = first.requestState
      const inputResponses = {
        "sampling-0": answers["sampling/createMessage"]!(first.inputRequests["sampling-0"].params)
      }
      const [body, tag] = state.split(".")
      const flipped = body!.slice(0, -2) + (body!.at(-2) === "A" ? "B" : "A") + body!.at(-1)
      for (const requestState of [`${flipped}.${tag}`, `${body}.${tag!.slice(1)}`, "garbage", `${body}`]) {
        const error = (yield* Effect.flip(request("tools/call", { ...params, inputResponses, requestState }))) as Obj
        assert.strictEqual(error.code, -32602, requestState)
        assert.include(error.message, "requestState")
      }
      // Valid state, different arguments: the state belongs to another request.
      const other = (yield* Effect.flip(
        request("tools/call", { name: "interview", arguments: { topic: "other" }, inputResponses, requestState: state })
      )) as Obj
      assert.strictEqual(other.code, -32602)
      // A state from another server instance does not verify either.
      const elsewhere = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: fullCapabilities
      })
      const foreign = (yield* Effect.flip(
        elsewhere.request("tools/call", { ...params, inputResponses, requestState: state })
      )) as Obj
      assert.strictEqual(foreign.code, -32602)
    })
  )

  it.effect(
    "2026-07-28: an inputResponses entry that is no result object is -32602 and the reply quotes its key cut (a 1 MB key does not come back)",
    () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), {
          revision: "2026-07-28",
          capabilities: { sampling: {}, elicitation: {} }
        })
        const key = "k".repeat(1_000_000)
        const params = { name: "interview", arguments: { topic: "x" }, inputResponses: { [key]: "yes" } }
        const error = (yield* Effect.flip(request("tools/call", params))) as Obj
        assert.strictEqual(error.code, -32602)
        assert.include(error.message, "kkkk")
        assert.isBelow(JSON.stringify(error).length, 1_000)
      })
  )

  it.effect("missing client capability: typed error on stateful revisions, -32021 on 2026-07-28", () =>
    Effect.gen(function* () {
      const stateful = yield* McpTest.connectRaw(testServer(features), {
        revision: "2025-11-25",
        capabilities: {},
        handlers: clientHandlers
      })
      const failed = (yield* stateful.request("tools/call", { name: "interview", arguments: { topic: "x" } })) as Obj
      assert.isTrue(failed.isError)
      assert.include(failed.content[0].text, "ClientRequestError")
      const handled = (yield* stateful.request("tools/call", { name: "optional", arguments: {} })) as Obj
      assert.deepStrictEqual(handled.content, [{ type: "text", text: "fallback: CapabilityMissing" }])
      const stateless = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: { elicitation: {} }
      })
      const error = (yield* Effect.flip(
        stateless.request("tools/call", { name: "interview", arguments: { topic: "x" } })
      )) as Obj
      assert.strictEqual(error.code, -32021)
      assert.deepStrictEqual(error.data, { requiredCapabilities: { sampling: {} } })
      const handledStateless = (yield* (yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: {}
      })).request("tools/call", { name: "optional", arguments: {} })) as Obj
      assert.deepStrictEqual(handledStateless.content, [{ type: "text", text: "fallback: CapabilityMissing" }])
    })
  )

  for (const version of revisions) {
    it.effect(`${version}: elicitation exists only where the revision has it; roots everywhere`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), {
          revision: version,
          capabilities: fullCapabilities,
          handlers: clientHandlers
        })
        const call = (name: string) =>
          version === "2026-07-28"
            ? Effect.map(driveRounds(request, { name, arguments: {} }), (r) => r.result)
            : (request("tools/call", { name, arguments: {} }) as Effect.Effect<Obj, unknown>)
        const optionalResult = (yield* call("optional")) as Obj
        assert.strictEqual(
          optionalResult.content[0].text,
          Features.has(version, "elicitation") ? "accept" : "fallback: NotInRevision"
        )
        const roots = (yield* call("roots")) as Obj
        assert.strictEqual(roots.content[0].text, "file:///a,file:///b")
      })
    )
  }

  it.effect("2025-11-25: URL elicitation carries an elicitationId and its completion notification", () =>
    Effect.gen(function* () {
      seen.length = 0
      const { request, drain } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2025-11-25",
        capabilities: fullCapabilities,
        handlers: clientHandlers
      })
      yield* drain
      const result = (yield* request("tools/call", { name: "visit", arguments: {} })) as Obj
      assert.strictEqual(result.content[0].text, "accept:id")
      const params = seen[0]!.params
      assert.strictEqual(params.mode, "url")
      assert.isString(params.elicitationId)
      const completions = (yield* drain).filter((n) => n.method === "notifications/elicitation/complete")
      assert.deepStrictEqual(
        completions.map((n) => n.params),
        [{ elicitationId: params.elicitationId }]
      )
    })
  )

  it.effect("2026-07-28: URL elicitation has no elicitationId and no completion notification", () =>
    Effect.gen(function* () {
      const { request, drain } = yield* McpTest.connectRaw(testServer(features), {
        revision: "2026-07-28",
        capabilities: fullCapabilities
      })
      const first = (yield* request("tools/call", { name: "visit", arguments: {} })) as Obj
      assert.deepStrictEqual(first.inputRequests["elicitation-0"].params, {
        mode: "url",
        message: "Sign in",
        url: "https://example.com/login"
      })
      const { result } = yield* driveRounds(request, { name: "visit", arguments: {} })
      assert.strictEqual(result.content[0].text, "accept:none")
      assert.deepStrictEqual(
        (yield* drain).filter((n) => n.method === "notifications/elicitation/complete"),
        []
      )
    })
  )

  it.effect("sampling with tools: only from 2025-11-25, and only when the client declared sampling.tools", () =>
    Effect.gen(function* () {
      seen.length = 0
      const call = (version: "2025-06-18" | "2025-11-25", capabilities: Obj) =>
        Effect.flatMap(
          McpTest.connectRaw(testServer(features), { revision: version, capabilities, handlers: clientHandlers }),
          ({ request }) => request("tools/call", { name: "withTools", arguments: {} }) as Effect.Effect<Obj, unknown>
        )
      assert.strictEqual((yield* call("2025-06-18", fullCapabilities)).content[0].text, "refused: NotInRevision")
      assert.strictEqual((yield* call("2025-11-25", fullCapabilities)).content[0].text, "refused: CapabilityMissing")
      const ok = yield* call("2025-11-25", { sampling: { tools: {} } })
      assert.strictEqual(ok.content[0].text, "echo weather?")
      assert.deepStrictEqual(seen.at(-1)!.params.tools, [{ name: "weather", inputSchema: { type: "object" } }])
    })
  )

  it.effect("ServerRequest tells the handler about the request", () =>
    Effect.gen(function* () {
      const probe = Tool.make("probe", {
        input: Schema.Struct({}),
        handler: () =>
          ServerRequest.ServerRequest.use((r) => Effect.succeed(`${r.version}:${r.stateless}:${r.clientInfo?.name}`))
      })
      for (const version of ["2025-06-18", "2026-07-28"] as const) {
        const { request } = yield* McpTest.connectRaw(testServer(Tool.layer(probe)), { revision: version, clientInfo })
        const result = (yield* request("tools/call", { name: "probe", arguments: {} })) as Obj
        assert.strictEqual(result.content[0].text, `${version}:${version === "2026-07-28"}:test-client`)
      }
    })
  )

  it.effect("2026-07-28: a handler's own rounds go out as given; the retry brings their answers and its state", () =>
    Effect.gen(function* () {
      const seen: Array<unknown> = []
      const form = (message: string) => ({
        method: "elicitation/create" as const,
        params: { message, requestedSchema: { type: "object" as const, properties: {} } }
      })
      // Two rounds of its own, the second reusing a key of the first: each round's answers are its own.
      const relay = Tool.make("relay", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.gen(function* () {
            const request = yield* ServerRequest.ServerRequest
            const retry = request.retry
            seen.push(retry)
            if (retry === undefined) return yield* request.requireInput({ a: form("A?"), b: form("B?") }, "one")
            if (retry.state === "one") return yield* request.requireInput({ a: form("A again?") }, "two")
            return `${retry.state}: ${JSON.stringify(retry.inputResponses)}`
          })
      })
      const { request } = yield* McpTest.connectRaw(testServer(Tool.layer(relay)), {
        revision: "2026-07-28",
        capabilities: fullCapabilities
      })
      const params = { name: "relay", arguments: {} }
      const first = (yield* request("tools/call", params)) as Obj
      assert.deepStrictEqual(Object.keys(first.inputRequests), ["a", "b"])
      assert.deepStrictEqual(first.inputRequests.b, form("B?"))
      const accepted = (text: string) => ({ action: "accept", content: { text } })
      const second = (yield* request("tools/call", {
        ...params,
        inputResponses: { a: accepted("1"), b: accepted("2") },
        requestState: first.requestState
      })) as Obj
      assert.deepStrictEqual(Object.keys(second.inputRequests), ["a"])
      const done = (yield* request("tools/call", {
        ...params,
        inputResponses: { a: accepted("3") },
        requestState: second.requestState
      })) as Obj
      assert.strictEqual(done.content[0].text, `two: {"a":{"action":"accept","content":{"text":"3"}}}`)
      assert.deepStrictEqual(seen, [
        undefined,
        { inputResponses: { a: accepted("1"), b: accepted("2") }, state: "one" },
        { inputResponses: { a: accepted("3") }, state: "two" }
      ])
      // Where asks are requests there are no rounds to run.
      const stateful = yield* McpTest.connectRaw(testServer(Tool.layer(relay)), {
        revision: "2025-11-25",
        capabilities: fullCapabilities
      })
      const refused = (yield* stateful.request("tools/call", params)) as Obj
      assert.isTrue(refused.isError)
    })
  )
})
