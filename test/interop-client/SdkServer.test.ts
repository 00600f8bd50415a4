/**
 * The effect-mcp client against a server built with the official SDK
 * (`McpServer` of @modelcontextprotocol/sdk 1.32.2, see sdkServer.ts), run as
 * a real child process: over stdio, over Streamable HTTP and over the legacy
 * HTTP+SSE transport on 127.0.0.1. On each: list and call every tool, read
 * the resources (static and templated), get the prompts, and cancel a long
 * call, which the SDK server must see as its handler's AbortSignal firing.
 */
import { fileURLToPath } from "node:url"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Tools from "@effect-mcp/protocol/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { node, spawnChild, type Watched, waitFor } from "../support/ServerProcess.ts"
import { stdioChild } from "../support/StdioChild.ts"

const fixture = fileURLToPath(new URL("./sdkServer.ts", import.meta.url))

const clientOptions: McpClient.Options = { clientInfo: { name: "effect-mcp-interop-client", version: "0.1.0" } }

interface Connection {
  readonly client: McpClient.McpClientShape
  /** What the server process wrote to stderr so far. */
  readonly stderr: Watched
}

const connect = <E>(transport: Layer.Layer<Transport.Transport, E>) =>
  Effect.map(Layer.build(McpClient.layer(clientOptions).pipe(Layer.provide(transport))), (context) =>
    Context.get(context, McpClient.McpClient)
  )

const overStdio: Effect.Effect<Connection, unknown, Scope.Scope> = Effect.suspend(() => {
  const child = stdioChild([fixture, "--stdio"])
  return Effect.map(connect(child.layer), (client) => ({ client, stderr: child.stderr }))
})

const overHttp = (flag: "--http" | "--sse"): Effect.Effect<Connection, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const child = yield* spawnChild(node, [fixture, flag])
    const base = (yield* child.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!
    const client = yield* connect(
      flag === "--http"
        ? NodeHttpClient.layerStreamableHttp({ url: `${base}/mcp` })
        : NodeHttpClient.layerSse({ url: `${base}/sse` })
    )
    return { client, stderr: child.stderr }
  })

const textOf = (result: Tools.CallToolResult): string => {
  const block = result.content[0]
  return block?.type === "text" ? block.text : ""
}

const exercise = (connection: Connection) =>
  Effect.gen(function* () {
    const { client } = connection
    assert.strictEqual(client.serverInfo?.name, "sdk-interop-server")

    // Tools: every one listed and called.
    const tools = yield* Stream.runCollect(client.tools)
    assert.deepStrictEqual(tools.map((t) => t.name).toSorted(), ["add", "echo", "fail", "slow"])
    assert.strictEqual(textOf(yield* client.callTool("echo", { text: "hi" })), "echo: hi")
    const sum = yield* client.callTool("add", { a: 2, b: 3 })
    assert.deepStrictEqual(sum.structuredContent, { sum: 5 })
    assert.strictEqual(textOf(sum), "5")
    const typed = yield* client.callTool("add", { a: 2, b: 3 }, { outputSchema: Schema.Struct({ sum: Schema.Number }) })
    assert.strictEqual(typed.structuredContent.sum, 5)
    const failed = yield* client.callTool("fail", {})
    assert.strictEqual(failed.isError, true)
    assert.strictEqual(textOf(failed), "it failed")
    assert.strictEqual(textOf(yield* client.callTool("slow", { ms: 1 })), "waited 1 ms")

    // Resources: the static one, the template, and a read through it.
    const resources = yield* Stream.runCollect(client.resources)
    assert.deepStrictEqual(
      resources.map((r) => r.uri),
      ["sdk://static/greeting"]
    )
    const greeting = yield* client.readResource("sdk://static/greeting")
    assert.deepStrictEqual(greeting.contents, [
      { uri: "sdk://static/greeting", mimeType: "text/plain", text: "hello from the SDK" }
    ])
    const templates = yield* Stream.runCollect(client.resourceTemplates)
    assert.deepStrictEqual(
      templates.map((t) => t.uriTemplate),
      ["sdk://items/{id}"]
    )
    const item = yield* client.readResource("sdk://items/42")
    assert.deepStrictEqual(item.contents, [
      { uri: "sdk://items/42", mimeType: "application/json", text: JSON.stringify({ id: "42" }) }
    ])

    // Prompts: with and without arguments.
    const prompts = yield* Stream.runCollect(client.prompts)
    assert.deepStrictEqual(prompts.map((p) => p.name).toSorted(), ["greet", "plain"])
    assert.deepStrictEqual(
      prompts.find((p) => p.name === "greet")?.arguments?.map((a) => a.name),
      ["name"]
    )
    const greet = yield* client.getPrompt("greet", { name: "Ada" })
    assert.deepStrictEqual(greet.messages, [{ role: "user", content: { type: "text", text: "Say hello to Ada" } }])
    const plain = yield* client.getPrompt("plain")
    assert.deepStrictEqual(plain.messages, [
      { role: "assistant", content: { type: "text", text: "Nothing to fill in" } }
    ])

    // Cancellation: interrupting the call reaches the SDK handler as its AbortSignal.
    const seen = connection.stderr().length
    const after = () => connection.stderr().slice(seen)
    const call = yield* Effect.forkChild(client.callTool("slow", { ms: 60_000 }))
    const id = (yield* waitFor(after, /started (\S+)/, undefined, connection.stderr))[1]!
    yield* Fiber.interrupt(call)
    const exit = yield* Fiber.await(call)
    assert.isTrue(Exit.hasInterrupts(exit))
    yield* waitFor(after, new RegExp(`aborted ${id}\\b`), undefined, connection.stderr)

    // The session is still usable after the cancellation.
    assert.strictEqual(textOf(yield* client.callTool("echo", { text: "still here" })), "echo: still here")
  })

describe("effect-mcp client -> official SDK server", () => {
  it.live("over stdio", () => Effect.flatMap(overStdio, exercise).pipe(Effect.scoped), 60_000)
  it.live("over Streamable HTTP", () => Effect.flatMap(overHttp("--http"), exercise).pipe(Effect.scoped), 60_000)
  it.live("over legacy HTTP+SSE", () => Effect.flatMap(overHttp("--sse"), exercise).pipe(Effect.scoped), 60_000)
})
