/**
 * The gateway over real upstreams (see fixture.ts: our everything server
 * over stdio and Streamable HTTP, the reference server-everything over
 * stdio, an SDK server recording headers), with the official SDK clients
 * downstream: 1.x (`@modelcontextprotocol/sdk`) and 2.x
 * (`@modelcontextprotocol/client`). One gateway for the whole file.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as Fixture from "./fixture.ts"
import { callWithProgress, textOf } from "./fixture.ts"

class Gateway extends Context.Service<Gateway, Fixture.Fixture>()("test/gateway/Gateway") {}

/** An SDK 1.x client of the gateway, sending its own bearer token; it records the elicitations it is asked. */
const sdk1 = (url: string) =>
  Effect.gen(function* () {
    const client = new Client(
      { name: "downstream-1", version: "1.0.0" },
      { capabilities: { sampling: {}, elicitation: { form: {} } } }
    )
    const elicited: Array<string> = []
    const toolsChanged = yield* Deferred.make<void>()
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params.message)
      return { action: "accept", content: { username: "ada", email: "ada@example.com" } }
    })
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "sampled downstream" },
      model: "scripted"
    }))
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      Deferred.doneUnsafe(toolsChanged, Effect.void)
    })
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${Fixture.secrets.downstream}` } }
    })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close().catch(() => undefined))
    )
    return { client, elicited, toolsChanged }
  })

/** An SDK 2.x client of the gateway; it records the elicitations it is asked. */
const sdk2 = (url: string) =>
  Effect.gen(function* () {
    const client = new Client2(
      { name: "downstream-2", version: "2.0.0" },
      { capabilities: { elicitation: { form: {} } } }
    )
    const elicited: Array<string> = []
    client.setRequestHandler("elicitation/create", async (request) => {
      elicited.push(request.params.message)
      return { action: "accept", content: { username: "bob", email: "bob@example.com" } }
    })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(new Transport2(new URL(url)))),
      () => Effect.promise(() => client.close().catch(() => undefined))
    )
    return { client, elicited }
  })

const call = (client: Client | Client2, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(() => (client as Client).callTool({ name, arguments: args }))

/**
 * Starts `test_long_running` (a minute) on `tool`, waits until the upstream says it started (on its stderr), and
 * returns how to cancel it: abort the call, then wait until the upstream says it was cancelled.
 */
const longRunning = (client: Client | Client2, tool: string, stderr: ServerProcess.Watched) =>
  Effect.gen(function* () {
    const abort = new AbortController()
    const before = stderr().length
    const read = () => stderr().slice(before)
    const running = yield* Effect.forkChild(
      Effect.tryPromise((): Promise<unknown> => {
        const params = { name: tool, arguments: { durationMs: 60_000 } }
        // 1.x takes a result schema before the options; 2.x takes the options second.
        return client instanceof Client
          ? client.callTool(params, undefined, { signal: abort.signal })
          : client.callTool(params, { signal: abort.signal })
      }).pipe(Effect.result)
    )
    const started = yield* ServerProcess.waitFor(read, /started (\S+)/, 30_000, stderr)
    return {
      cancel: Effect.gen(function* () {
        abort.abort("the user gave up")
        yield* ServerProcess.waitFor(read, new RegExp(`cancelled ${started[1]}`), 30_000, stderr)
        const outcome = yield* Fiber.join(running)
        assert.strictEqual(outcome._tag, "Failure")
      })
    }
  })

describe("the gateway over real upstreams", () => {
  // Live services: real processes and sockets, waited for by event, each wait bounded.
  layer(Layer.effect(Gateway, Fixture.make()), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect("one namespaced catalog of every upstream's tools, prompts, resources and templates", () =>
      Effect.gen(function* () {
        const { url } = yield* Gateway
        const { client } = yield* sdk1(url)
        const tools = yield* Fixture.toolNames(client)
        for (const name of [
          "effect__test_simple_text",
          "remote__test_simple_text",
          "legacy__test_simple_text",
          "reference__echo",
          "wire__whoami"
        ])
          assert.include(tools, name)
        assert.isTrue(
          tools.every((t) => /^(effect|remote|legacy|reference|wire)__/.test(t)),
          "every tool carries its upstream's prefix"
        )
        const prompts = (yield* Effect.promise(() => client.listPrompts())).prompts.map((p) => p.name)
        assert.include(prompts, "effect__test_simple_prompt")
        assert.include(prompts, "remote__test_simple_prompt")
        const resources = (yield* Effect.promise(() => client.listResources())).resources.map((r) => r.uri)
        // Both everything servers list it: the first upstream in the configuration serves it, listed once.
        assert.strictEqual(resources.filter((uri) => uri === "test://static-text").length, 1)
        const templates = (yield* Effect.promise(() => client.listResourceTemplates())).resourceTemplates
        assert.include(
          templates.map((t) => t.uriTemplate),
          "test://template/{id}/data"
        )
      })
    )

    it.effect("calls, reads, prompts and completions are routed to their upstream (SDK 2.x downstream)", () =>
      Effect.gen(function* () {
        const { url } = yield* Gateway
        const { client } = yield* sdk2(url)
        assert.strictEqual(textOf(yield* call(client, "reference__echo", { message: "hi" })), "Echo: hi")
        assert.strictEqual(
          textOf(yield* call(client, "remote__test_simple_text")),
          "This is a simple text response for testing."
        )
        assert.strictEqual(
          textOf(yield* call(client, "legacy__test_simple_text")),
          "This is a simple text response for testing."
        )
        assert.strictEqual(textOf(yield* call(client, "wire__whoami")), "hello from wire")
        const read = yield* Effect.promise(() => client.readResource({ uri: "test://template/7/data" }))
        assert.strictEqual(read.contents[0]?.uri, "test://template/7/data")
        const prompt = yield* Effect.promise(() => client.getPrompt({ name: "effect__test_simple_prompt" }))
        assert.deepStrictEqual(prompt.messages, [
          { role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }
        ])
        const byPrompt = yield* Effect.promise(() =>
          client.complete({
            ref: { type: "ref/prompt", name: "remote__test_prompt_with_arguments" },
            argument: { name: "arg1", value: "par" }
          })
        )
        assert.deepStrictEqual(byPrompt.completion.values, ["paris", "park", "party"])
        const byTemplate = yield* Effect.promise(() =>
          client.complete({
            ref: { type: "ref/resource", uri: "test://template/{id}/data" },
            argument: { name: "id", value: "1" }
          })
        )
        assert.deepStrictEqual(byTemplate.completion.values, ["1", "123"])
      })
    )

    it.effect("an upstream's list_changed reaches the downstream client, with the new catalog", () =>
      Effect.gen(function* () {
        const { url } = yield* Gateway
        const { client, toolsChanged } = yield* sdk1(url)
        assert.strictEqual(textOf(yield* call(client, "effect__test_trigger_tool_change")), "test_dynamic_tool added")
        yield* Deferred.await(toolsChanged).pipe(Effect.timeout("30 seconds"))
        const tools = yield* Fixture.toolNames(client)
        assert.include(tools, "effect__test_dynamic_tool")
        assert.strictEqual(textOf(yield* call(client, "effect__test_dynamic_tool")), "The dynamic tool is here")
        // Back as it was for the other tests.
        assert.strictEqual(textOf(yield* call(client, "effect__test_trigger_tool_change")), "test_dynamic_tool removed")
      })
    )

    it.effect("progress of the upstream reaches the downstream caller", () =>
      Effect.gen(function* () {
        const { url } = yield* Gateway
        const { client } = yield* sdk1(url)
        yield* callWithProgress(client, "effect__test_tool_with_progress")
      })
    )

    it.effect("cancelling downstream cancels the call on the upstream", () =>
      Effect.gen(function* () {
        const { url, effectStderr } = yield* Gateway
        const { client } = yield* sdk1(url)
        const running = yield* longRunning(client, "effect__test_long_running", effectStderr)
        yield* running.cancel
      })
    )

    it.effect("an upstream's elicitation and sampling reach the client whose call asked, and only it", () =>
      Effect.gen(function* () {
        const { url, remoteStderr } = yield* Gateway
        const a = yield* sdk1(url)
        const b = yield* sdk2(url)
        // B waits on another upstream meanwhile: A's upstream asks A.
        const waiting = yield* longRunning(b.client, "remote__test_long_running", remoteStderr)
        const answered = yield* call(a.client, "effect__test_elicitation", { message: "Who are you?" })
        assert.match(textOf(answered), /ada@example\.com/)
        assert.deepStrictEqual(a.elicited, ["Who are you?"])
        assert.deepStrictEqual(b.elicited, [])
        yield* waiting.cancel
        const fromB = yield* call(b.client, "remote__test_elicitation", { message: "And you?" })
        assert.match(textOf(fromB), /bob@example\.com/)
        assert.deepStrictEqual(a.elicited, ["Who are you?"])
        assert.deepStrictEqual(b.elicited, ["And you?"])
        const sampled = yield* call(a.client, "reference__trigger-sampling-request", { prompt: "hello" })
        assert.match(textOf(sampled), /sampled downstream/)
      })
    )

    it.effect("an ask the gateway cannot attribute to one client is refused, never guessed", () =>
      Effect.gen(function* () {
        const { url, effectStderr } = yield* Gateway
        const a = yield* sdk1(url)
        const b = yield* sdk2(url)
        // Both wait on `effect`: its elicitation could be either's.
        const waiting = yield* longRunning(b.client, "effect__test_long_running", effectStderr)
        const refused = yield* Effect.flip(
          Effect.tryPromise(() =>
            a.client.callTool({ name: "effect__test_elicitation", arguments: { message: "Whose is this?" } })
          )
        )
        assert.match(String(refused.cause), /2 downstream clients have calls in flight on "effect"/)
        assert.deepStrictEqual(a.elicited, [])
        assert.deepStrictEqual(b.elicited, [])
        yield* waiting.cancel
      })
    )

    it.effect("no downstream token reaches an upstream: each gets its own credential, as captured on the wire", () =>
      Effect.gen(function* () {
        const { url, wireHeaders } = yield* Gateway
        const { client } = yield* sdk1(url)
        const before = wireHeaders.length
        assert.strictEqual(textOf(yield* call(client, "wire__whoami")), "hello from wire")
        const seen = wireHeaders.slice(before)
        assert.isAbove(seen.length, 0)
        // The upstream saw the gateway's credential for it (from the environment, over the configured header).
        for (const headers of wireHeaders) assert.strictEqual(headers.authorization, `Bearer ${Fixture.secrets.wire}`)
        assert.notInclude(JSON.stringify(wireHeaders), Fixture.secrets.downstream)
        assert.notInclude(JSON.stringify(wireHeaders), Fixture.secrets.remote)
      })
    )
  })
})
