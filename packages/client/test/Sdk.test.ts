/**
 * McpClient against the official TypeScript SDK (1.32.2) McpServer, in
 * process: the SDK's Transport is adapted onto one end of a memory pair.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import { completable } from "@modelcontextprotocol/sdk/server/completable.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js"
import {
  ListToolsRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { z } from "zod"
import { clientInfo } from "./fixtures.ts"
import { SdkTransportAdapter } from "./sdkTransport.ts"

interface SdkLog {
  readonly subscribed: Array<string>
  readonly unsubscribed: Array<string>
  aborted: boolean
  /** Completed at the first subscribe and the first unsubscribe. */
  readonly firstSubscribe: Deferred.Deferred<void>
  readonly firstUnsubscribe: Deferred.Deferred<void>
}

const makeSdkServer = (started: Deferred.Deferred<void>, aborted: Deferred.Deferred<void>) => {
  const log: SdkLog = {
    subscribed: [],
    unsubscribed: [],
    aborted: false,
    firstSubscribe: Deferred.makeUnsafe<void>(),
    firstUnsubscribe: Deferred.makeUnsafe<void>()
  }
  const server = new McpServer(
    { name: "sdk-server", version: "1.32.2" },
    { capabilities: { logging: {}, resources: { subscribe: true } }, instructions: "from the sdk" }
  )
  server.registerTool("echo", { description: "echoes", inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text: `echo ${text}` }]
  }))
  server.registerTool(
    "add",
    {
      description: "adds",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() }
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } })
  )
  server.registerTool("progress", { description: "reports progress" }, async (extra) => {
    const token = extra._meta?.progressToken
    if (token !== undefined) {
      for (const progress of [1, 2, 3]) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 3 }
        })
      }
    }
    return { content: [{ type: "text", text: "done" }] }
  })
  server.registerTool("log", { description: "logs" }, async () => {
    await server.sendLoggingMessage({ level: "warning", logger: "sdk", data: "careful" })
    return { content: [{ type: "text", text: "logged" }] }
  })
  server.registerTool("slow", { description: "waits until cancelled" }, async (extra) => {
    Effect.runSync(Deferred.succeed(started, undefined))
    await new Promise<void>((resolve) =>
      extra.signal.addEventListener("abort", () => {
        log.aborted = true
        Effect.runSync(Deferred.succeed(aborted, undefined))
        resolve()
      })
    )
    return { content: [{ type: "text", text: "cancelled" }] }
  })
  server.registerTool("ask", { description: "elicits" }, async () => {
    const answer = await server.server.elicitInput({
      message: "name?",
      requestedSchema: {
        type: "object",
        properties: { name: { type: "string", default: "Ann" }, age: { type: "integer", default: 7 } }
      }
    })
    return { content: [{ type: "text", text: JSON.stringify(answer) }] }
  })
  server.registerResource("static", "test://static", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "static text" }]
  }))
  server.registerResource(
    "item",
    new ResourceTemplate("test://items/{id}", {
      list: undefined,
      complete: { id: (value) => ["1", "12", "2"].filter((v) => v.startsWith(value)) }
    }),
    { mimeType: "text/plain" },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `item ${String(id)}` }] })
  )
  server.registerPrompt(
    "greet",
    {
      description: "greets",
      argsSchema: { who: completable(z.string(), (value) => ["world", "wall"].filter((v) => v.startsWith(value))) }
    },
    ({ who }) => ({ messages: [{ role: "user", content: { type: "text", text: `hello ${who}` } }] })
  )
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    log.subscribed.push(request.params.uri)
    Deferred.doneUnsafe(log.firstSubscribe, Exit.void)
    return {}
  })
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    log.unsubscribed.push(request.params.uri)
    Deferred.doneUnsafe(log.firstUnsubscribe, Exit.void)
    return {}
  })
  return { server, log }
}

/** An SDK server on one end of a memory pair and an McpClient on the other. */
const againstSdk = <R = never>(handlers?: Layer.Layer<R>) =>
  Effect.gen(function* () {
    const started = yield* Deferred.make<void>()
    const aborted = yield* Deferred.make<void>()
    const [sdkEnd, clientEnd] = yield* MemoryTransport.makePair()
    const { server, log } = makeSdkServer(started, aborted)
    yield* Effect.promise(() => server.connect(new SdkTransportAdapter(sdkEnd)))
    yield* Effect.addFinalizer(() => Effect.promise(() => server.close()))
    const context = handlers === undefined ? undefined : yield* Layer.build(handlers)
    const make = McpClient.make({ clientInfo }).pipe(Effect.provideService(Transport.Transport, clientEnd))
    const client = yield* context === undefined ? make : Effect.provideContext(make, context)
    return { client, server, log, started, aborted }
  })

describe("McpClient -> official SDK McpServer (1.32.2)", () => {
  it.effect("negotiates 2025-11-25 after the server/discover probe is refused", () =>
    Effect.gen(function* () {
      const { client } = yield* againstSdk()
      assert.strictEqual(client.revision, "2025-11-25")
      assert.strictEqual(client.serverInfo?.name, "sdk-server")
      assert.strictEqual(client.instructions, "from the sdk")
      yield* client.ping()
    })
  )

  it.effect("tools: list (page and stream), call, structured output, progress", () =>
    Effect.gen(function* () {
      const { client } = yield* againstSdk()
      const page = yield* client.listTools()
      const names = (yield* Stream.runCollect(client.tools)).map((t) => t.name)
      assert.deepStrictEqual(
        names,
        page.tools.map((t) => t.name)
      )
      assert.deepStrictEqual(names, ["echo", "add", "progress", "log", "slow", "ask"])
      const echo = yield* client.callTool("echo", { text: "hi" })
      assert.deepStrictEqual(echo.content, [{ type: "text", text: "echo hi" }])
      const sum = yield* client.callTool("add", { a: 2, b: 3 }, { outputSchema: Schema.Struct({ sum: Schema.Number }) })
      assert.strictEqual(sum.structuredContent.sum, 5)
      const events = yield* Stream.runCollect(client.callToolWithProgress("progress"))
      assert.deepStrictEqual(
        events.map((e) => (e._tag === "Progress" ? e.update.progress : "result")),
        [1, 2, 3, "result"]
      )
    })
  )

  it.effect("resources: list, templates, read; subscribe and unsubscribe around an updates Stream", () =>
    Effect.gen(function* () {
      const { client, server, log } = yield* againstSdk()
      const resources = yield* Stream.runCollect(client.resources)
      assert.deepStrictEqual(
        resources.map((r) => r.uri),
        ["test://static"]
      )
      const templates = yield* Stream.runCollect(client.resourceTemplates)
      assert.deepStrictEqual(
        templates.map((t) => t.uriTemplate),
        ["test://items/{id}"]
      )
      const read = yield* client.readResource("test://items/42")
      assert.deepStrictEqual(read.contents, [{ uri: "test://items/42", text: "item 42" }])
      const fiber = yield* client
        .resourceUpdates("test://static")
        .pipe(Stream.take(1), Stream.runCollect, Effect.forkChild)
      yield* Deferred.await(log.firstSubscribe)
      yield* Effect.promise(() => server.server.sendResourceUpdated({ uri: "test://static" }))
      const updates = yield* Fiber.join(fiber)
      assert.deepStrictEqual(
        updates.map((u) => u.uri),
        ["test://static"]
      )
      yield* Deferred.await(log.firstUnsubscribe)
      assert.deepStrictEqual(log.unsubscribed, ["test://static"])
    })
  )

  it.effect("prompts and completion", () =>
    Effect.gen(function* () {
      const { client } = yield* againstSdk()
      const prompts = yield* Stream.runCollect(client.prompts)
      assert.deepStrictEqual(
        prompts.map((p) => p.name),
        ["greet"]
      )
      const got = yield* client.getPrompt("greet", { who: "world" })
      assert.deepStrictEqual(got.messages, [{ role: "user", content: { type: "text", text: "hello world" } }])
      const forPrompt = yield* client.complete({ type: "ref/prompt", name: "greet" }, { name: "who", value: "wo" })
      assert.deepStrictEqual(forPrompt.completion.values, ["world"])
      const forTemplate = yield* client.complete(
        { type: "ref/resource", uri: "test://items/{id}" },
        { name: "id", value: "1" }
      )
      assert.deepStrictEqual(forTemplate.completion.values, ["1", "12"])
    })
  )

  it.effect("logging: setLevel and log messages", () =>
    Effect.gen(function* () {
      const { client } = yield* againstSdk()
      const messages = yield* client.logMessages.pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* client.setLoggingLevel("info")
      yield* client.callTool("log")
      assert.deepStrictEqual(yield* Fiber.join(messages), [{ level: "warning", logger: "sdk", data: "careful" }])
    })
  )

  it.effect("interrupting a call sends notifications/cancelled: the SDK handler's AbortSignal fires", () =>
    Effect.gen(function* () {
      const { client, log, started, aborted } = yield* againstSdk()
      const fiber = yield* client.callTool("slow").pipe(Effect.forkChild)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(aborted)
      assert.isTrue(log.aborted)
    })
  )

  it.effect("elicitation from an SDK tool gets the schema defaults", () =>
    Effect.gen(function* () {
      const { client } = yield* againstSdk(
        ElicitationHandler.layer({ form: () => Effect.succeed({ action: "accept", content: {} }) })
      )
      const result = yield* client.callTool("ask")
      const block = result.content[0] as unknown as { readonly text: string }
      assert.deepStrictEqual(JSON.parse(block.text), { action: "accept", content: { name: "Ann", age: 7 } })
    })
  )

  it.effect("page Streams over a low-level SDK Server that pages its tools", () =>
    Effect.gen(function* () {
      const [sdkEnd, clientEnd] = yield* MemoryTransport.makePair()
      const server = new Server({ name: "paged", version: "1" }, { capabilities: { tools: {} } })
      const all = Array.from({ length: 25 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: "object" as const } }))
      server.setRequestHandler(ListToolsRequestSchema, async (request) => {
        const start = Number(request.params?.cursor ?? 0)
        const end = Math.min(all.length, start + 10)
        return end < all.length
          ? { tools: all.slice(start, end), nextCursor: String(end) }
          : { tools: all.slice(start, end) }
      })
      yield* Effect.promise(() => server.connect(new SdkTransportAdapter(sdkEnd)))
      yield* Effect.addFinalizer(() => Effect.promise(() => server.close()))
      const client = yield* McpClient.make({ clientInfo }).pipe(Effect.provideService(Transport.Transport, clientEnd))
      const tools = yield* Stream.runCollect(client.tools)
      assert.deepStrictEqual(
        tools.map((t) => t.name),
        all.map((t) => t.name)
      )
    })
  )
})
