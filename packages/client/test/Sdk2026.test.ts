/**
 * McpClient against `@modelcontextprotocol/server` 2.4.0, which speaks
 * 2026-07-28: `serveStdio` with the memory pair as its transport decides the
 * era from the opening message (our `server/discover` probe), then serves the
 * stateless revision, multi-round-trip input requests and listen streams.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import { acceptedContent, completable, inputRequired, inputResponse, McpServer } from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { z } from "zod"
import { clientInfo } from "./fixtures.ts"
import { SdkTransportAdapter } from "./sdkTransport.ts"

const makeServer = (aborted: Deferred.Deferred<void>, started: Deferred.Deferred<void>) => {
  const server = new McpServer(
    { name: "sdk-2026", version: "2.4.0" },
    { capabilities: { logging: {}, tools: { listChanged: true } } }
  )
  server.registerTool("echo", { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text", text: `echo ${text}` }]
  }))
  server.registerTool(
    "add",
    { inputSchema: z.object({ a: z.number(), b: z.number() }), outputSchema: z.object({ sum: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } })
  )
  server.registerTool("profile", {}, async (ctx) => {
    const profile = acceptedContent(ctx.mcpReq.inputResponses, "profile")
    if (profile === undefined) {
      return inputRequired({
        inputRequests: {
          profile: inputRequired.elicit({
            message: "your profile",
            requestedSchema: {
              type: "object",
              properties: {
                name: { type: "string", default: "John Doe" },
                age: { type: "integer", default: 30 },
                status: { type: "string", enum: ["active", "inactive"], default: "active" },
                verified: { type: "boolean", default: true }
              }
            }
          })
        }
      })
    }
    return { content: [{ type: "text", text: JSON.stringify(profile) }] }
  })
  server.registerTool("summarize", {}, async (ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, "llm")
    if (answer.kind !== "sampling") {
      return inputRequired({
        inputRequests: {
          llm: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "summarize" } }],
            maxTokens: 10
          })
        }
      })
    }
    return { content: [{ type: "text", text: `model said: ${JSON.stringify(answer.result.content)}` }] }
  })
  server.registerTool("log", {}, async (ctx) => {
    await ctx.mcpReq.log("warning", "careful", "sdk")
    return { content: [{ type: "text", text: "logged" }] }
  })
  server.registerTool("slow", {}, async (ctx) => {
    Effect.runSync(Deferred.succeed(started, undefined))
    await new Promise<void>((resolve) =>
      ctx.mcpReq.signal.addEventListener("abort", () => {
        Effect.runSync(Deferred.succeed(aborted, undefined))
        resolve()
      })
    )
    return { content: [{ type: "text", text: "cancelled" }] }
  })
  server.registerResource("static", "test://static", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "static text" }]
  }))
  server.registerPrompt(
    "greet",
    { argsSchema: z.object({ who: completable(z.string(), (v) => ["world", "wall"].filter((w) => w.startsWith(v))) }) },
    ({ who }) => ({ messages: [{ role: "user", content: { type: "text", text: `hello ${who}` } }] })
  )
  return server
}

const against2026 = <R = never>(handlers?: Layer.Layer<R>) =>
  Effect.gen(function* () {
    const aborted = yield* Deferred.make<void>()
    const started = yield* Deferred.make<void>()
    const [sdkEnd, clientEnd] = yield* MemoryTransport.makePair()
    const instances: Array<McpServer> = []
    // Completed once the server acknowledges a subscriptions/listen: it has the stream then.
    const acknowledged = yield* Deferred.make<void>()
    const watched: MemoryTransport.End = {
      incoming: sdkEnd.incoming,
      close: sdkEnd.close,
      send: (frame, options) =>
        Effect.andThen(
          sdkEnd.send(frame, options),
          (frame as { readonly method?: string }).method === "notifications/subscriptions/acknowledged"
            ? Deferred.succeed(acknowledged, undefined)
            : Effect.void
        )
    }
    const handle = serveStdio(
      () => {
        const server = makeServer(aborted, started)
        instances.push(server)
        return server
      },
      { transport: new SdkTransportAdapter(watched) as never }
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => handle.close()))
    const context = handlers === undefined ? undefined : yield* Layer.build(handlers)
    const make = McpClient.make({ clientInfo }).pipe(Effect.provideService(Transport.Transport, clientEnd))
    const client = yield* context === undefined ? make : Effect.provideContext(make, context)
    return { client, instances, aborted, started, listenAcknowledged: Deferred.await(acknowledged) }
  })

describe("McpClient -> @modelcontextprotocol/server 2.4.0 on 2026-07-28", () => {
  it.effect("discovers the server and speaks 2026-07-28", () =>
    Effect.gen(function* () {
      const { client } = yield* against2026()
      assert.strictEqual(client.revision, "2026-07-28")
      assert.strictEqual(client.serverInfo?.name, "sdk-2026")
    })
  )

  it.effect("tools, structured output, resources, prompts, completion", () =>
    Effect.gen(function* () {
      const { client } = yield* against2026()
      const names = (yield* Stream.runCollect(client.tools)).map((t) => t.name)
      assert.includeMembers(names, ["echo", "add", "profile", "summarize"])
      const echo = yield* client.callTool("echo", { text: "hi" })
      assert.deepStrictEqual(echo.content, [{ type: "text", text: "echo hi" }])
      const sum = yield* client.callTool("add", { a: 2, b: 3 }, { outputSchema: Schema.Struct({ sum: Schema.Number }) })
      assert.strictEqual(sum.structuredContent.sum, 5)
      const read = yield* client.readResource("test://static")
      assert.deepStrictEqual(read.contents, [{ uri: "test://static", mimeType: "text/plain", text: "static text" }])
      const got = yield* client.getPrompt("greet", { who: "world" })
      assert.deepStrictEqual(got.messages, [{ role: "user", content: { type: "text", text: "hello world" } }])
      const completed = yield* client.complete({ type: "ref/prompt", name: "greet" }, { name: "who", value: "wa" })
      assert.deepStrictEqual(completed.completion.values, ["wall"])
    })
  )

  it.effect("input_required elicitation: answered by the handler with schema defaults, then retried", () =>
    Effect.gen(function* () {
      const { client } = yield* against2026(
        ElicitationHandler.layer({ form: () => Effect.succeed({ action: "accept", content: { name: "Ann" } }) })
      )
      const result = yield* client.callTool("profile")
      const block = result.content[0] as unknown as { readonly text: string }
      assert.deepStrictEqual(JSON.parse(block.text), { name: "Ann", age: 30, status: "active", verified: true })
    })
  )

  it.effect("input_required sampling", () =>
    Effect.gen(function* () {
      const { client } = yield* against2026(
        SamplingHandler.layer(() =>
          Effect.succeed({ role: "assistant", content: { type: "text", text: "short" }, model: "m" })
        )
      )
      const result = yield* client.callTool("summarize")
      assert.deepStrictEqual(result.content, [{ type: "text", text: 'model said: {"type":"text","text":"short"}' }])
    })
  )

  it.effect("log level travels in _meta; the server's log messages arrive", () =>
    Effect.gen(function* () {
      const { client } = yield* against2026()
      const messages = yield* client.logMessages.pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* client.setLoggingLevel("debug")
      yield* client.callTool("log")
      const [message] = yield* Fiber.join(messages)
      assert.strictEqual(message?.level, "warning")
      assert.strictEqual(message?.data, "careful")
    })
  )

  it.effect("tool list changes arrive on a subscriptions/listen stream", () =>
    Effect.gen(function* () {
      const { client, instances, listenAcknowledged } = yield* against2026()
      const fiber = yield* client.toolListChanged.pipe(Stream.take(1), Stream.runCollect, Effect.forkChild)
      // The listen is open once the server acknowledged it; then a change reaches it.
      yield* listenAcknowledged
      yield* Effect.sync(() => instances[0]?.sendToolListChanged())
      assert.strictEqual((yield* Fiber.join(fiber)).length, 1)
    })
  )

  it.effect("interrupting a call cancels it on the server", () =>
    Effect.gen(function* () {
      const { client, started, aborted } = yield* against2026()
      const fiber = yield* client.callTool("slow").pipe(Effect.forkChild)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(aborted)
    })
  )
})
