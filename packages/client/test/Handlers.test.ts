import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Session from "@effect-mcp/engine/Session"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Context from "effect/Context"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ServerControl } from "./fixtures.ts"
import { clientInfo, connect, makeServer } from "./fixtures.ts"

type Params = { readonly [key: string]: unknown }

/**
 * A tool that asks the client for something: a server-to-client request on
 * stateful revisions, an `input_required` round on 2026-07-28. It answers
 * with what it got back, as JSON text.
 */
const askTool =
  (control: ServerControl): Session.Handler =>
  (p, info) =>
    Effect.gen(function* () {
      const params = p as Params
      const args = (params.arguments ?? {}) as Params
      const method = String(args.method)
      const asked = args.params as object
      if (params.name === "ask-forever") {
        return { resultType: "input_required", inputRequests: { q: { method, params: asked } }, requestState: "again" }
      }
      if (!info.revision.stateless) {
        const result = yield* control
          .session()
          .request(method, asked)
          .pipe(Effect.catch((e) => Effect.fail(new McpError.InternalError({ message: `${e._tag}: ${e.message}` }))))
        return { content: [{ type: "text", text: JSON.stringify(result) }] }
      }
      if (params.inputResponses === undefined) {
        return { resultType: "input_required", inputRequests: { q: { method, params: asked } }, requestState: "s1" }
      }
      const answer = { responses: params.inputResponses, state: params.requestState }
      return { content: [{ type: "text", text: JSON.stringify(answer) }] }
    })

const server = { handlers: [["tools/call", askTool] as const] }

const textOf = (result: { readonly content: ReadonlyArray<{ readonly type: string }> }) => {
  const block = result.content[0] as unknown as { readonly text: string }
  return JSON.parse(block.text) as Params
}

/** The client's answer, whichever way it travelled. */
const answerOf = (version: string, result: { readonly content: ReadonlyArray<{ readonly type: string }> }) => {
  const json = textOf(result)
  if (version !== "2026-07-28") return json
  assert.strictEqual(json.state, "s1")
  return (json.responses as Params).q as Params
}

// The 2025-11-25 and 2026-07-28 schemas type an answer's values as string | integer | boolean | string[]:
// a fractional number is valid in a form but not in an ElicitResult. The stateful path is not validated by
// the receiving engine; the 2026-07-28 retry is, so it gets a whole number.
const defaultsSchemaFor = (version: string) => ({
  type: "object",
  properties: {
    name: { type: "string", default: "John Doe" },
    age: { type: "integer", default: 30 },
    score: { type: "number", default: version === "2026-07-28" ? 95 : 95.5 },
    status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
    verified: { type: "boolean", default: true },
    note: { type: "string", maxLength: 5 }
  },
  required: ["name", "age"]
})

const elicitation = (content: { readonly [key: string]: string | number | boolean | ReadonlyArray<string> }) =>
  ElicitationHandler.layer({
    form: () => Effect.succeed({ action: "accept", content }),
    url: (params) => Effect.succeed({ action: params.url.startsWith("https://") ? "accept" : "decline" })
  })

const sampling = SamplingHandler.layer(
  (params) =>
    Effect.succeed({
      role: "assistant",
      content: { type: "text", text: `you said ${JSON.stringify(params.messages[0]?.content)}` },
      model: "test-model",
      stopReason: "endTurn"
    }),
  { tools: true }
)

describe("capabilities follow the handler Layers", () => {
  for (const version of ["2025-11-25", "2026-07-28"] as const) {
    it.effect(`${version}: none without handlers, each one with its handler`, () =>
      Effect.gen(function* () {
        // The client follows tasks by itself: it declares the Tasks extension, which a server keeps on 2025-11-25
        // too (capabilities are open objects there; see scripts/wire/deviations.ts in the protocol package).
        const always = { extensions: { "io.modelcontextprotocol/tasks": {} } }
        const bare = yield* connect(version)
        yield* bare.client.callTool("tool-0")
        assert.deepStrictEqual(bare.server.log.clientCapabilities.at(-1), always)
        const full = yield* connect(version, {
          handlers: Layer.mergeAll(sampling, elicitation({}), RootsHandler.layer([]))
        })
        yield* full.client.callTool("tool-0")
        assert.deepStrictEqual(full.server.log.clientCapabilities.at(-1), {
          ...always,
          sampling: { tools: {} },
          elicitation: { form: {}, url: {} },
          roots: { listChanged: true }
        })
      })
    )
  }

  it.effect("a server request for an undeclared capability is refused by the server's gate", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-11-25", { server })
      const error = yield* Effect.flip(
        client.callTool("ask", { method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } })
      )
      assert.strictEqual(error._tag, "InternalError")
      assert.include(error.message, "NotSupported")
    })
  )
})

describe("sampling", () => {
  for (const version of ["2024-11-05", "2025-11-25", "2026-07-28"] as const) {
    it.effect(`${version}: the handler answers sampling/createMessage`, () =>
      Effect.gen(function* () {
        const { client } = yield* connect(version, { server, handlers: sampling })
        const result = yield* client.callTool("ask", {
          method: "sampling/createMessage",
          params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 }
        })
        const answer = answerOf(version, result)
        assert.strictEqual(answer.model, "test-model")
        assert.deepStrictEqual(answer.content, { type: "text", text: 'you said {"type":"text","text":"hi"}' })
      })
    )
  }
})

describe("elicitation", () => {
  for (const version of ["2025-11-25", "2026-07-28"] as const) {
    it.effect(`${version}: the 5 schema defaults are applied to a form answer missing them`, () =>
      Effect.gen(function* () {
        const { client } = yield* connect(version, { server, handlers: elicitation({ note: "hey" }) })
        const result = yield* client.callTool("ask", {
          method: "elicitation/create",
          params: { mode: "form", message: "who are you?", requestedSchema: defaultsSchemaFor(version) }
        })
        assert.deepStrictEqual(answerOf(version, result), {
          action: "accept",
          content: {
            note: "hey",
            name: "John Doe",
            age: 30,
            score: version === "2026-07-28" ? 95 : 95.5,
            status: "active",
            verified: true
          }
        })
      })
    )

    it.effect(`${version}: an invalid answer is rejected before it is sent`, () =>
      Effect.gen(function* () {
        const { client, wire } = yield* connect(version, {
          server,
          handlers: elicitation({ age: "thirty", status: "retired", note: "far too long" })
        })
        const error = yield* Effect.flip(
          client.callTool("ask", {
            method: "elicitation/create",
            params: { message: "who are you?", requestedSchema: defaultsSchemaFor(version) }
          })
        )
        if (version === "2026-07-28") {
          assert.strictEqual(error._tag, "FormError")
          if (error._tag === "FormError") {
            assert.deepStrictEqual(
              error.issues.map((i) => i.field),
              ["age", "status", "note"]
            )
          }
          // No retry carried the answer.
          assert.strictEqual(wire.methods().filter((m) => m === "tools/call").length, 1)
        } else {
          assert.strictEqual(error._tag, "InternalError")
        }
        assert.isFalse(JSON.stringify(wire.sent).includes("thirty"))
      })
    )

    it.effect(`${version}: URL mode`, () =>
      Effect.gen(function* () {
        const { client } = yield* connect(version, { server, handlers: elicitation({}) })
        const params = { mode: "url", message: "log in", url: "https://example.com/login", elicitationId: "e1" }
        const result = yield* client.callTool("ask", {
          method: "elicitation/create",
          params: version === "2026-07-28" ? { mode: "url", message: "log in", url: params.url } : params
        })
        assert.deepStrictEqual(answerOf(version, result), { action: "accept" })
      })
    )
  }

  it.effect("2025-06-18 form elicitation (no defaults on non-boolean fields there)", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2025-06-18", { server, handlers: elicitation({ name: "Ann" }) })
      const result = yield* client.callTool("ask", {
        method: "elicitation/create",
        params: {
          message: "name?",
          requestedSchema: {
            type: "object",
            properties: { name: { type: "string" }, ok: { type: "boolean", default: false } }
          }
        }
      })
      assert.deepStrictEqual(textOf(result), { action: "accept", content: { name: "Ann", ok: false } })
    })
  )
})

describe("roots", () => {
  const roots = [{ uri: "file:///work", name: "work" }]

  it.effect("stateful: roots/list is answered and a change is announced", () =>
    Effect.gen(function* () {
      const layer = RootsHandler.layer(roots)
      const context = yield* Layer.build(layer)
      const list = Context.get(context, RootsHandler.RootsList)
      const { client, wire } = yield* connect("2025-11-25", { server, handlers: Layer.succeedContext(context) })
      const result = yield* client.callTool("ask", { method: "roots/list", params: {} })
      assert.deepStrictEqual(textOf(result), { roots })
      yield* list.set([...roots, { uri: "file:///tmp" }])
      yield* wire.awaitMethod("notifications/roots/list_changed")
      const again = yield* client.callTool("ask", { method: "roots/list", params: {} })
      assert.deepStrictEqual(textOf(again), { roots: [...roots, { uri: "file:///tmp" }] })
    })
  )

  it.effect("2026-07-28: roots come back in an input response; no list_changed exists there", () =>
    Effect.gen(function* () {
      const layer = RootsHandler.layer(roots)
      const context = yield* Layer.build(layer)
      const list = Context.get(context, RootsHandler.RootsList)
      const { client, wire } = yield* connect("2026-07-28", { server, handlers: Layer.succeedContext(context) })
      const result = yield* client.callTool("ask", { method: "roots/list", params: {} })
      assert.deepStrictEqual(answerOf("2026-07-28", result), { roots })
      // Returns once all the change set going has come to rest.
      yield* McpTest.runIdle(list.set([]))
      assert.isFalse(wire.methods().includes("notifications/roots/list_changed"))
    })
  )
})

describe("multi-round-trip bounds (2026-07-28)", () => {
  it.effect("a server that keeps asking ends the call with a typed error after the bound", () =>
    Effect.gen(function* () {
      const { client, wire } = yield* connect("2026-07-28", {
        server,
        handlers: RootsHandler.layer([]),
        client: { maxInputRounds: 3 }
      })
      const error = yield* Effect.flip(client.callTool("ask-forever", { method: "roots/list", params: {} }))
      assert.strictEqual(error._tag, "InputRequiredError")
      if (error._tag === "InputRequiredError") assert.strictEqual(error.reason, "TooManyRounds")
      assert.strictEqual(wire.methods().filter((m) => m === "tools/call").length, 4)
    })
  )

  it.effect("requestOnce returns a round as it came, and sends the caller's retry as given", () =>
    Effect.gen(function* () {
      const { client, wire } = yield* connect("2026-07-28", { server, handlers: RootsHandler.layer([]) })
      const call = { name: "ask", arguments: { method: "roots/list", params: {} } }
      const round = (yield* client.requestOnce("tools/call", call)) as Params
      assert.deepStrictEqual(round, {
        resultType: "input_required",
        inputRequests: { q: { method: "roots/list", params: {} } },
        requestState: "s1"
      })
      // Sent once: the handler was not asked, nothing was retried.
      assert.strictEqual(wire.methods().filter((m) => m === "tools/call").length, 1)
      const done = (yield* client.requestOnce("tools/call", {
        ...call,
        inputResponses: { q: { roots: [{ uri: "file:///mine" }] } },
        requestState: "s1"
      })) as { readonly content: ReadonlyArray<{ readonly type: string }> }
      assert.deepStrictEqual(textOf(done), { responses: { q: { roots: [{ uri: "file:///mine" }] } }, state: "s1" })
    })
  )

  it.effect("input the client has no handler for is a typed error", () =>
    Effect.gen(function* () {
      const { client } = yield* connect("2026-07-28", { server })
      const error = yield* Effect.flip(client.callTool("ask", { method: "roots/list", params: {} }))
      assert.strictEqual(error._tag, "InputRequiredError")
      if (error._tag === "InputRequiredError") assert.strictEqual(error.reason, "MissingHandler")
    })
  )
})

describe("McpClient.layer", () => {
  it.effect("handler Layers provided to the client Layer decide its capabilities", () =>
    Effect.gen(function* () {
      const [serverEnd, clientEnd] = yield* MemoryTransport.makePair()
      const server = yield* makeServer(serverEnd)
      const layer = McpClient.layer({ clientInfo, supportedVersions: ["2025-11-25"] }).pipe(
        Layer.provide(Layer.mergeAll(MemoryTransport.layer(clientEnd), sampling))
      )
      const context = yield* Layer.build(layer)
      const client = Context.get(context, McpClient.McpClient)
      yield* client.callTool("tool-0")
      assert.deepStrictEqual(server.log.clientCapabilities.at(-1), {
        extensions: { "io.modelcontextprotocol/tasks": {} },
        sampling: { tools: {} }
      })
    })
  )
})
