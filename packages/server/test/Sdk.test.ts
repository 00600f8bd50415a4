import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type McpError as SdkMcpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Features from "@effect-mcp/protocol/Features"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Deferred from "effect/Deferred"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Obj, testServer } from "./fixtures.ts"
import * as SdkAdapter from "./sdkAdapter.ts"

// The revisions @modelcontextprotocol/sdk 1.32.2 speaks (its SUPPORTED_PROTOCOL_VERSIONS, less the pre-release 2024-10-07).
const sdkRevisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = [
  "2024-11-05",
  "2025-03-26",
  "2025-06-18",
  "2025-11-25"
]

const started = Deferred.makeUnsafe<void>()
const finalized = Deferred.makeUnsafe<void>()

const Shape = Schema.Union([
  Schema.TaggedStruct("circle", { radius: Schema.Finite }),
  Schema.TaggedStruct("square", { side: Schema.Finite })
])

const tools = Tool.layer(
  Tool.make("add", {
    description: "Adds",
    input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
    output: Schema.Struct({ sum: Schema.Finite }),
    handler: ({ a, b }) => Effect.succeed({ sum: a + b })
  }),
  Tool.make("area", {
    input: Schema.Struct({ shape: Shape }),
    strict: true,
    handler: ({ shape }) => Effect.succeed(shape._tag === "square" ? String(shape.side ** 2) : "round")
  }),
  Tool.make("failing", { input: Schema.Struct({}), handler: () => Effect.fail(new Error("no luck")) }),
  Tool.make("chatty", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function* () {
        yield* ServerRequest.log("debug", "one")
        yield* Effect.logInfo("two")
        yield* ServerRequest.log("error", { three: 3 })
        return "logged"
      })
  }),
  Tool.make("steps", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function* () {
        for (let i = 1; i <= 3; i++) yield* ServerRequest.progress({ progress: i, total: 3 })
        return "stepped"
      })
  }),
  Tool.make("slow", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.acquireRelease(Deferred.succeed(started, undefined), () => Deferred.succeed(finalized, undefined)).pipe(
        Effect.andThen(Effect.never),
        Effect.scoped
      )
  }),
  Tool.make("interview", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function* () {
        const answer = yield* Sampling.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "hi" } }],
          maxTokens: 10
        })
        const form = yield* Elicitation.form({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) })
        return `${Sampling.text(answer)}/${form.action === "accept" ? form.content.name : form.action}`
      })
  })
)

const resources = Layer.mergeAll(
  Resource.layer(
    Resource.make({ uri: "test://static-text", name: "text", mimeType: "text/plain", read: Effect.succeed("hello") }),
    Resource.make({ uri: "test://static-binary", name: "binary", read: Effect.succeed(new Uint8Array([1, 2, 3])) })
  ),
  ResourceTemplate.layer(
    ResourceTemplate.make({
      uriTemplate: "test://template/{id}/data",
      name: "template",
      complete: { id: (v) => Effect.succeed(["10", "11", "20"].filter((x) => x.startsWith(v))) },
      read: ({ id }) => Effect.succeed(`data for ${String(id)}`)
    })
  )
)

const prompts = Prompt.layer(
  Prompt.make({
    name: "test_prompt_with_arguments",
    description: "Two arguments",
    arguments: {
      arg1: { required: true, complete: (v) => Effect.succeed(["alpha", "beta"].filter((x) => x.startsWith(v))) },
      arg2: {}
    },
    handler: ({ arg1, arg2 }) => Effect.succeed(`arg1=${arg1} arg2=${arg2 ?? "-"}`)
  })
)

const features = Layer.mergeAll(tools, resources, prompts)

const sdkConnect = (version: ProtocolVersion.ProtocolVersion) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(testServer(features, { supportedVersions: [version] }))
    const server = Context.get(context, McpServer.McpServer)
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    const client = new Client(
      { name: "sdk-client", version: "1.0.0" },
      { capabilities: { sampling: {}, elicitation: {}, roots: {} } }
    )
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "sampled" },
      model: "m"
    }))
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }))
    const transport = yield* SdkAdapter.make(clientEnd)
    yield* Effect.promise(() => client.connect(transport))
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
    return { client, server }
  })

const sdkError = <A>(promise: () => Promise<A>) =>
  Effect.flip(Effect.tryPromise({ try: promise, catch: (e) => e as SdkMcpError }))

describe("the official SDK client against an effect-mcp server", () => {
  for (const version of sdkRevisions) {
    it.effect(`${version}: tools`, () =>
      Effect.gen(function* () {
        const { client } = yield* sdkConnect(version)
        assert.strictEqual(client.getServerVersion()?.name, "test-server")
        const listed = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(
          listed.tools.map((t) => t.name),
          ["add", "area", "chatty", "failing", "interview", "slow", "steps"]
        )
        const area = listed.tools.find((t) => t.name === "area")!
        assert.strictEqual((area.inputSchema as Obj).properties.shape.anyOf.length, 2)
        const sum = yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 1, b: 2 } }))
        assert.deepStrictEqual(sum.content, [{ type: "text", text: '{"sum":3}' }])
        if (Features.has(version, "structuredContent")) assert.deepStrictEqual(sum.structuredContent, { sum: 3 })
        const squared = yield* Effect.promise(() =>
          client.callTool({ name: "area", arguments: { shape: { _tag: "square", side: 4 } } })
        )
        assert.deepStrictEqual(squared.content, [{ type: "text", text: "16" }])
        const failed = yield* Effect.promise(() => client.callTool({ name: "failing", arguments: {} }))
        assert.isTrue(failed.isError)
        assert.include((failed.content as Array<Obj>)[0]!.text, "no luck")
        const unknown = yield* sdkError(() => client.callTool({ name: "nope", arguments: {} }))
        assert.strictEqual(unknown.code, -32602)
      })
    )

    it.effect(`${version}: resources, templates and subscriptions`, () =>
      Effect.gen(function* () {
        const { client, server } = yield* sdkConnect(version)
        const listed = yield* Effect.promise(() => client.listResources())
        assert.deepStrictEqual(
          listed.resources.map((r) => r.uri),
          ["test://static-binary", "test://static-text"]
        )
        const templates = yield* Effect.promise(() => client.listResourceTemplates())
        assert.strictEqual(templates.resourceTemplates[0]!.uriTemplate, "test://template/{id}/data")
        const text = yield* Effect.promise(() => client.readResource({ uri: "test://static-text" }))
        assert.deepStrictEqual(text.contents, [{ uri: "test://static-text", mimeType: "text/plain", text: "hello" }])
        const blob = yield* Effect.promise(() => client.readResource({ uri: "test://static-binary" }))
        assert.strictEqual((blob.contents[0] as Obj).blob, "AQID")
        const templated = yield* Effect.promise(() => client.readResource({ uri: "test://template/7/data" }))
        assert.strictEqual((templated.contents[0] as Obj).text, "data for 7")
        const missing = yield* sdkError(() => client.readResource({ uri: "test://missing" }))
        assert.strictEqual(missing.code, -32002)
        const updates: Array<string> = []
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
          updates.push(n.params.uri)
        })
        yield* Effect.promise(() => client.subscribeResource({ uri: "test://static-text" }))
        yield* server.resourceUpdated("test://static-text")
        yield* server.resourceUpdated("test://static-binary")
        yield* Effect.promise(() => client.ping())
        assert.deepStrictEqual(updates, ["test://static-text"])
        const completion = yield* Effect.promise(() =>
          client.complete({
            ref: { type: "ref/resource", uri: "test://template/{id}/data" },
            argument: { name: "id", value: "1" }
          })
        )
        assert.deepStrictEqual(completion.completion.values, ["10", "11"])
      })
    )

    it.effect(`${version}: prompts and completion`, () =>
      Effect.gen(function* () {
        const { client } = yield* sdkConnect(version)
        const listed = yield* Effect.promise(() => client.listPrompts())
        assert.deepStrictEqual(listed.prompts[0]!.arguments, [{ name: "arg1", required: true }, { name: "arg2" }])
        const got = yield* Effect.promise(() =>
          client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "x", arg2: "y" } })
        )
        assert.deepStrictEqual(got.messages, [{ role: "user", content: { type: "text", text: "arg1=x arg2=y" } }])
        const missing = yield* sdkError(() => client.getPrompt({ name: "test_prompt_with_arguments", arguments: {} }))
        assert.strictEqual(missing.code, -32602)
        const completion = yield* Effect.promise(() =>
          client.complete({
            ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
            argument: { name: "arg1", value: "a" }
          })
        )
        assert.deepStrictEqual(completion.completion, { values: ["alpha"], total: 1, hasMore: false })
      })
    )

    it.effect(`${version}: logging, progress and list changes`, () =>
      Effect.gen(function* () {
        const { client, server } = yield* sdkConnect(version)
        const logs: Array<string> = []
        client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
          logs.push(n.params.level)
        })
        yield* Effect.promise(() => client.setLoggingLevel("debug"))
        yield* Effect.promise(() => client.callTool({ name: "chatty", arguments: {} }))
        assert.deepStrictEqual(logs, ["debug", "info", "error"])
        const progress: Array<number> = []
        const stepped = yield* Effect.promise(() =>
          client.callTool({ name: "steps", arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })
        )
        assert.deepStrictEqual(progress, [1, 2, 3])
        assert.deepStrictEqual(stepped.content, [{ type: "text", text: "stepped" }])
        let changed = 0
        client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
          changed++
        })
        yield* server.listChanged("tools")
        yield* Effect.promise(() => client.ping())
        assert.strictEqual(changed, 1)
      })
    )

    it.effect(`${version}: cancelling a call interrupts the handler`, () =>
      Effect.gen(function* () {
        const { client } = yield* sdkConnect(version)
        const controller = new AbortController()
        const call = client.callTool({ name: "slow", arguments: {} }, undefined, { signal: controller.signal })
        call.catch(() => {})
        yield* Deferred.await(started)
        controller.abort("user cancelled")
        yield* Deferred.await(finalized)
        const error = yield* Effect.flip(Effect.tryPromise(() => call))
        assert.isDefined(error)
      })
    )

    it.effect(`${version}: sampling and elicitation from inside a tool`, () =>
      Effect.gen(function* () {
        const { client } = yield* sdkConnect(version)
        const result = yield* Effect.promise(() => client.callTool({ name: "interview", arguments: {} }))
        if (Features.has(version, "elicitation")) {
          assert.deepStrictEqual(result.content, [{ type: "text", text: "sampled/Ada" }])
        } else {
          assert.isTrue(result.isError)
          assert.include((result.content as Array<Obj>)[0]!.text, "elicitation/create")
        }
      })
    )
  }
})
