/**
 * `@modelcontextprotocol/client` 2.4.0 (which speaks 2026-07-28) against an
 * effect-mcp server: the stateless revision, multi-round-trip input requests
 * answered by the SDK's own handlers, progress and cancellation.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client, type Transport as Transport2 } from "@modelcontextprotocol/client"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Obj, testServer } from "./fixtures.ts"
import * as SdkAdapter from "./sdkAdapter.ts"

const started = Deferred.makeUnsafe<void>()
const finalized = Deferred.makeUnsafe<void>()
let runs = 0

const features = Layer.mergeAll(
  Tool.layer(
    Tool.make("add", {
      input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
      output: Schema.Struct({ sum: Schema.Finite }),
      handler: ({ a, b }) => Effect.succeed({ sum: a + b })
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
      input: Schema.Struct({ topic: Schema.String }),
      handler: ({ topic }) =>
        Effect.gen(function* () {
          runs++
          const answer = yield* Sampling.createMessage({
            messages: [{ role: "user", content: { type: "text", text: topic } }],
            maxTokens: 10
          })
          const form = yield* Elicitation.form({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) })
          return `${Sampling.text(answer)}/${form.action === "accept" ? form.content.name : form.action}`
        })
    })
  ),
  Resource.layer(Resource.make({ uri: "test://static-text", name: "text", read: Effect.succeed("hello") })),
  Prompt.layer(
    Prompt.make({
      name: "greet",
      arguments: {
        name: { required: true, complete: (v) => Effect.succeed(["Ada", "Alan"].filter((n) => n.startsWith(v))) }
      },
      handler: ({ name }) => Effect.succeed(`Hello ${name}`)
    })
  )
)

const connect2026 = Effect.gen(function* () {
  const context = yield* Layer.build(testServer(features))
  const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
  yield* McpServer.makeSession.pipe(
    Effect.provideService(Transport.Transport, serverEnd),
    Effect.provideContext(context)
  )
  const client = new Client(
    { name: "sdk2-client", version: "2.4.0" },
    {
      capabilities: { sampling: {}, elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } }
    }
  )
  client.setRequestHandler("sampling/createMessage", async () => ({
    role: "assistant",
    content: { type: "text", text: "sampled" },
    model: "m"
  }))
  client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Ada" } }))
  const transport = (yield* SdkAdapter.make(clientEnd)) as unknown as Transport2
  yield* Effect.promise(() => client.connect(transport))
  yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
  return client
})

describe("the 2.x SDK client on 2026-07-28", () => {
  it.effect("negotiates 2026-07-28 and calls tools, reads resources, gets prompts, completes", () =>
    Effect.gen(function* () {
      const client = yield* connect2026
      assert.strictEqual(client.getNegotiatedProtocolVersion?.(), "2026-07-28")
      const tools = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(
        tools.tools.map((t) => t.name),
        ["add", "interview", "slow", "steps"]
      )
      const sum = yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 2, b: 5 } }))
      assert.deepStrictEqual(sum.structuredContent, { sum: 7 })
      const read = yield* Effect.promise(() => client.readResource({ uri: "test://static-text" }))
      assert.strictEqual((read.contents[0] as Obj).text, "hello")
      const prompt = yield* Effect.promise(() => client.getPrompt({ name: "greet", arguments: { name: "Ada" } }))
      assert.deepStrictEqual(prompt.messages[0]!.content, { type: "text", text: "Hello Ada" })
      const completion = yield* Effect.promise(() =>
        client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "A" } })
      )
      assert.deepStrictEqual(completion.completion.values, ["Ada", "Alan"])
      const missing = yield* Effect.flip(
        Effect.tryPromise({ try: () => client.readResource({ uri: "test://missing" }), catch: (e) => e as Obj })
      )
      // 2026-07-28 moved resource-not-found to -32602 (with the URI in data).
      assert.strictEqual(missing.code, -32602)
    })
  )

  it.effect("answers input_required rounds with its own handlers; the handler re-runs per round", () =>
    Effect.gen(function* () {
      runs = 0
      const client = yield* connect2026
      const result = yield* Effect.promise(() => client.callTool({ name: "interview", arguments: { topic: "t" } }))
      assert.deepStrictEqual(result.content, [{ type: "text", text: "sampled/Ada" }])
      assert.strictEqual(runs, 3)
    })
  )

  it.effect("progress and cancellation", () =>
    Effect.gen(function* () {
      const client = yield* connect2026
      const progress: Array<number> = []
      const stepped = yield* Effect.promise(() =>
        client.callTool({ name: "steps", arguments: {} }, { onprogress: (p) => progress.push(p.progress) })
      )
      assert.deepStrictEqual(stepped.content, [{ type: "text", text: "stepped" }])
      assert.deepStrictEqual(progress, [1, 2, 3])
      const controller = new AbortController()
      const call = client.callTool({ name: "slow", arguments: {} }, { signal: controller.signal })
      call.catch(() => {})
      yield* Deferred.await(started)
      controller.abort("user cancelled")
      yield* Deferred.await(finalized)
    })
  )
})
