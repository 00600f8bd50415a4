import { assert, describe, it } from "@effect/vitest"
import * as Features from "@effect-mcp/protocol/Features"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { type Obj, revisions, testServer } from "./fixtures.ts"

const Address = Schema.Struct({ street: Schema.String, city: Schema.String }).annotate({ identifier: "address" })
const Shape = Schema.Union([
  Schema.TaggedStruct("circle", { radius: Schema.Finite }),
  Schema.TaggedStruct("square", { side: Schema.Finite })
])

const add = Tool.make("add", {
  title: "Add",
  description: "Adds two numbers",
  input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  output: Schema.Struct({ sum: Schema.Finite }),
  annotations: { readOnlyHint: true },
  icons: [{ src: "https://example.com/add.png", mimeType: "image/png" }],
  _meta: { "example.com/x": 1 },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const area = Tool.make("area", {
  description: "Area of a shape",
  input: Schema.Struct({ shape: Shape, home: Schema.optionalKey(Address) }),
  strict: true,
  handler: ({ shape }) =>
    Effect.succeed(String(shape._tag === "circle" ? Math.PI * shape.radius ** 2 : shape.side ** 2))
})

const raw = Tool.make("raw", {
  input: {
    type: "object",
    properties: { n: { type: "integer", minimum: 1 }, tag: { enum: ["a", "b"] } },
    required: ["n"],
    additionalProperties: false
  },
  handler: (args) => Effect.succeed(`n=${String(args.n)}`)
})

class Boom extends Schema.TaggedError<Boom>()("Boom", { message: Schema.String }) {}

const failing = Tool.make("failing", {
  input: Schema.Struct({}),
  handler: () => Effect.fail(new Boom({ message: "the disk is full" }))
})

const dying = Tool.make("dying", {
  input: Schema.Struct({}),
  handler: () => Effect.die(new Error("unexpected"))
})

const blocks = Tool.make("blocks", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.succeed([
      { type: "text" as const, text: "hello" },
      { type: "image" as const, data: "aW1n", mimeType: "image/png" },
      { type: "audio" as const, data: "YXVk", mimeType: "audio/wav" },
      { type: "resource_link" as const, uri: "test://linked", name: "linked" },
      { type: "resource" as const, resource: { uri: "test://embedded", mimeType: "text/plain", text: "embedded" } }
    ])
})

const features = Tool.layer(add, area, raw, failing, dying, blocks)

describe("tools on every revision", () => {
  for (const version of revisions) {
    it.effect(`${version}: tools/list is sorted by name and shaped for the revision`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const result = (yield* request("tools/list")) as Obj
        assert.deepStrictEqual(
          result.tools.map((t: Obj) => t.name),
          ["add", "area", "blocks", "dying", "failing", "raw"]
        )
        const addTool = result.tools[0]
        assert.strictEqual(addTool.description, "Adds two numbers")
        assert.strictEqual("title" in addTool, Features.has(version, "title"))
        assert.strictEqual("annotations" in addTool, Features.has(version, "toolAnnotations"))
        assert.strictEqual("outputSchema" in addTool, Features.has(version, "outputSchema"))
        assert.strictEqual("icons" in addTool, Features.has(version, "icons"))
        assert.strictEqual("_meta" in addTool, Features.has(version, "contentMeta"))
        assert.strictEqual(addTool.inputSchema.type, "object")
        assert.strictEqual("$schema" in addTool.inputSchema, Features.has(version, "jsonSchemaDialect"))
        assert.strictEqual("ttlMs" in result, Features.has(version, "cacheHints"))
        if (Features.has(version, "cacheHints")) {
          assert.strictEqual(result.ttlMs, 0)
          assert.strictEqual(result.cacheScope, "private")
        }
      })
    )

    it.effect(
      `${version}: a Schema tool gets typed input and returns structured content where the revision has it`,
      () =>
        Effect.gen(function* () {
          const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
          const result = (yield* request("tools/call", { name: "add", arguments: { a: 2, b: 3 } })) as Obj
          assert.deepStrictEqual(result.content, [{ type: "text", text: '{"sum":5}' }])
          if (Features.has(version, "structuredContent")) assert.deepStrictEqual(result.structuredContent, { sum: 5 })
          else assert.isUndefined(result.structuredContent)
          assert.isUndefined(result.isError)
        })
    )

    it.effect(`${version}: an output that is a union of objects is advertised and sent as structured content`, () =>
      Effect.gen(function* () {
        // One member named (a $ref to its definition), one inline.
        const Found = Schema.Struct({ found: Schema.Literal(true), value: Schema.String }).annotate({
          identifier: "Found"
        })
        const lookup = Tool.make("lookup", {
          input: Schema.Struct({ key: Schema.String }),
          output: Schema.Union([Found, Schema.Struct({ found: Schema.Literal(false) })]),
          handler: ({ key }) =>
            Effect.succeed(key === "a" ? { found: true as const, value: "A" } : { found: false as const })
        })
        const { request } = yield* McpTest.connectRaw(testServer(Tool.layer(lookup)), { revision: version })
        const [listed] = ((yield* request("tools/list")) as Obj).tools
        const result = (yield* request("tools/call", { name: "lookup", arguments: { key: "a" } })) as Obj
        if (Features.has(version, "outputSchema")) {
          assert.strictEqual(listed.outputSchema.type, "object")
          assert.strictEqual(listed.outputSchema.anyOf.length, 2)
          assert.deepStrictEqual(result.structuredContent, { found: true, value: "A" })
        } else {
          assert.notProperty(listed, "outputSchema")
          assert.notProperty(result, "structuredContent")
        }
        assert.deepStrictEqual(result.content, [{ type: "text", text: '{"found":true,"value":"A"}' }])
      })
    )

    it.effect(`${version}: invalid arguments follow the revision's rule`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const exit = yield* Effect.exit(request("tools/call", { name: "add", arguments: { a: "two", b: 3 } }))
        if (Features.has(version, "toolExecution") || Features.has(version, "inputRequired")) {
          // 2025-11-25 on: an input validation error is a tool execution error.
          assert.isTrue(Exit.isSuccess(exit))
          const result = (exit as Exit.Success<Obj>).value
          assert.isTrue(result.isError)
          assert.include(result.content[0].text, "Invalid arguments for tool add")
          assert.include(result.content[0].text, "a")
        } else {
          assert.isTrue(Exit.isFailure(exit))
          const error = yield* Effect.flip(request("tools/call", { name: "add", arguments: { a: "two", b: 3 } }))
          assert.strictEqual((error as Obj).code, -32602)
        }
      })
    )

    it.effect(`${version}: an unknown tool is a -32602 protocol error`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const error = (yield* Effect.flip(request("tools/call", { name: "nope", arguments: {} }))) as Obj
        assert.strictEqual(error.code, -32602)
        assert.include(error.message, "Unknown tool: nope")
      })
    )

    it.effect(
      `${version}: handler failures become isError results with their message, defects with a correlation id`,
      () =>
        Effect.gen(function* () {
          const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
          const failed = (yield* request("tools/call", { name: "failing", arguments: {} })) as Obj
          assert.isTrue(failed.isError)
          assert.strictEqual(failed.content[0].text, "Tool failing failed: Boom: the disk is full")
          const died = (yield* request("tools/call", { name: "dying", arguments: {} })) as Obj
          assert.isTrue(died.isError)
          assert.match(died.content[0].text, /^Internal error \(correlation id [0-9a-f-]{36}\)$/)
        })
    )

    it.effect(`${version}: content of every kind, down-converted where the revision lacks it`, () =>
      Effect.gen(function* () {
        const { request } = yield* McpTest.connectRaw(testServer(features), { revision: version })
        const result = (yield* request("tools/call", { name: "blocks", arguments: {} })) as Obj
        const types = result.content.map((b: Obj) => b.type)
        assert.deepStrictEqual(types, [
          "text",
          "image",
          Features.has(version, "audioContent") ? "audio" : "text",
          Features.has(version, "resourceLinks") ? "resource_link" : "text",
          "resource"
        ])
        assert.strictEqual(result.content[4].resource.text, "embedded")
      })
    )
  }
})

describe("tool input schemas", () => {
  it.effect("keep unions, $defs, additionalProperties:false and the 2020-12 dialect", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      const result = (yield* request("tools/list")) as Obj
      const schema = result.tools.find((t: Obj) => t.name === "area").inputSchema
      assert.strictEqual(schema.$schema, "https://json-schema.org/draft/2020-12/schema")
      assert.strictEqual(schema.additionalProperties, false)
      assert.strictEqual(schema.properties.shape.anyOf.length, 2)
      assert.deepStrictEqual(schema.properties.shape.anyOf[0].properties._tag, { type: "string", enum: ["circle"] })
      assert.deepStrictEqual(schema.properties.home, { $ref: "#/$defs/address" })
      assert.deepStrictEqual(schema.$defs.address.required, ["street", "city"])
      assert.deepStrictEqual(schema.required, ["shape"])
    })
  )

  it.effect("a strict Schema tool rejects unknown keys; union members decode", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      const ok = (yield* request("tools/call", {
        name: "area",
        arguments: { shape: { _tag: "square", side: 3 } }
      })) as Obj
      assert.deepStrictEqual(ok.content, [{ type: "text", text: "9" }])
      const extra = (yield* request("tools/call", {
        name: "area",
        arguments: { shape: { _tag: "square", side: 3 }, color: "red" }
      })) as Obj
      assert.isTrue(extra.isError)
    })
  )

  it.effect("a raw JSON Schema tool validates its arguments", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(features), { revision: "2025-11-25" })
      const ok = (yield* request("tools/call", { name: "raw", arguments: { n: 2, tag: "a" } })) as Obj
      assert.deepStrictEqual(ok.content, [{ type: "text", text: "n=2" }])
      for (const bad of [{ n: 0 }, { n: 1.5 }, { tag: "a" }, { n: 1, tag: "c" }, { n: 1, other: true }]) {
        const result = (yield* request("tools/call", { name: "raw", arguments: bad })) as Obj
        assert.isTrue(result.isError, JSON.stringify(bad))
      }
      const list = (yield* request("tools/list")) as Obj
      const schema = list.tools.find((t: Obj) => t.name === "raw").inputSchema
      assert.strictEqual(schema.$schema, "https://json-schema.org/draft/2020-12/schema")
      assert.strictEqual(schema.additionalProperties, false)
    })
  )
})

describe("runtime changes", () => {
  it.effect("adding and removing tools sends tools/list_changed to stateful sessions", () =>
    Effect.gen(function* () {
      const { request, drain, server } = yield* McpTest.connectRaw(testServer(Tool.layer(add)), {
        revision: "2025-06-18"
      })
      yield* drain
      const scope = yield* Scope.make()
      yield* Tool.register(raw).pipe(Effect.provideService(McpServer.McpServer, server), Scope.provide(scope))
      const afterAdd = yield* drain
      assert.deepStrictEqual(
        afterAdd.map((n) => n.method),
        ["notifications/tools/list_changed"]
      )
      const listed = (yield* request("tools/list")) as Obj
      assert.deepStrictEqual(
        listed.tools.map((t: Obj) => t.name),
        ["add", "raw"]
      )
      yield* Scope.close(scope, Exit.void)
      const afterRemove = yield* drain
      assert.deepStrictEqual(
        afterRemove.map((n) => n.method),
        ["notifications/tools/list_changed"]
      )
      const relisted = (yield* request("tools/list")) as Obj
      assert.deepStrictEqual(
        relisted.tools.map((t: Obj) => t.name),
        ["add"]
      )
    })
  )

  const hidden = Tool.make("hidden", {
    input: Schema.Struct({}),
    listed: false,
    handler: () => Effect.succeed("found")
  })
  it.effect("an unlisted tool is left out of tools/list and answers a call by its name", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(testServer(Tool.layer(add, hidden)), {
        revision: "2025-11-25"
      })
      const listed = (yield* request("tools/list")) as Obj
      assert.deepStrictEqual(
        listed.tools.map((t: Obj) => t.name),
        ["add"]
      )
      const called = (yield* request("tools/call", { name: "hidden", arguments: {} })) as Obj
      assert.deepStrictEqual(called.content, [{ type: "text", text: "found" }])
    })
  )

  it.effect("a session initialized before the first tool existed is not told the tool list changed", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(testServer(Layer.empty))
      const server = Context.get(context, McpServer.McpServer)
      const before = yield* McpTest.makeRawClient({ revision: "2025-06-18" }).pipe(Effect.provideContext(context))
      assert.isUndefined((before.session.state.peerCapabilities as Obj).tools, "no tools declared to it")
      yield* Tool.register(add).pipe(Effect.provideService(McpServer.McpServer, server))
      const after = yield* McpTest.makeRawClient({ revision: "2025-06-18" }).pipe(Effect.provideContext(context))
      assert.deepStrictEqual((after.session.state.peerCapabilities as Obj).tools, { listChanged: true })
      yield* Effect.all([before.drain, after.drain])
      yield* Tool.register(raw).pipe(Effect.provideService(McpServer.McpServer, server))
      assert.deepStrictEqual(
        (yield* after.drain).map((n) => n.method),
        ["notifications/tools/list_changed"]
      )
      assert.deepStrictEqual(yield* before.drain, [], "it did not declare tools.listChanged to this session")
    })
  )

  it.effect("capabilities derive from what is registered", () =>
    Effect.gen(function* () {
      const { session: client } = yield* McpTest.connectRaw(testServer(Tool.layer(add)), { revision: "2025-06-18" })
      const caps = client.state.peerCapabilities as Obj
      assert.deepStrictEqual(caps.tools, { listChanged: true })
      assert.deepStrictEqual(caps.logging, {})
      assert.isUndefined(caps.prompts)
      assert.isUndefined(caps.resources)
      const empty = yield* McpTest.connectRaw(testServer(Layer.empty), { revision: "2025-06-18" })
      const refused = (yield* Effect.flip(empty.request("tools/list"))) as Obj
      assert.strictEqual(refused.reason, "CapabilityNotDeclared")
      // Sent anyway (bypassing the client's own gate), the server answers method-not-found.
      const error = (yield* Effect.flip(empty.session.peer.request("tools/list", {}))) as Obj
      assert.strictEqual(error.code, -32601)
    })
  )
})
