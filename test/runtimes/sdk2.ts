/**
 * The official 2.x SDK client (`@modelcontextprotocol/client`) in auto negotiation against the everything server
 * on 2026-07-28, the session every runtime runs: a tool that reports progress (the updates arrive while it runs),
 * an elicitation round by `input_required` and retry, a resource read and a prompt.
 */
import { assert } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** The transport's `fetch`, to watch the HTTP exchanges (workerd's isolate headers). */
export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>

/** Connects a 2.x client in auto negotiation for the scope, answering elicitations with the name "Ada". */
export const connect = (url: string, fetch?: Fetch) =>
  Effect.gen(function* () {
    const client = new Client(
      { name: "sdk2-runtimes", version: "2.4.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } }
    )
    const elicited: Array<string> = []
    client.setRequestHandler("elicitation/create", async (request) => {
      elicited.push(request.params.message)
      return { action: "accept", content: { name: "Ada" } }
    })
    const transport = new StreamableHTTPClientTransport(new URL(url), fetch === undefined ? undefined : { fetch })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close())
    )
    return { client, elicited }
  })

/** The session: connects, then checks progress, an elicitation round, a resource and a prompt. */
export const session = (url: string, fetch?: Fetch): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { client, elicited } = yield* connect(url, fetch)
    assert.strictEqual(client.getNegotiatedProtocolVersion?.(), "2026-07-28")
    const tools = yield* Effect.promise(() => client.listTools())
    assert.include(
      tools.tools.map((tool) => tool.name),
      "test_tool_with_progress"
    )
    const progress: Array<number> = []
    const stepped = yield* Effect.promise(() =>
      client.callTool(
        { name: "test_tool_with_progress", arguments: {} },
        { onprogress: (update) => progress.push(update.progress) }
      )
    )
    assert.deepStrictEqual(stepped.content, [{ type: "text", text: "Tool with progress executed successfully" }])
    // The SDK drops its progress handler as it reads the response: the last update may be lost with it.
    assert.deepStrictEqual(progress, [0, 50, 100].slice(0, Math.max(2, progress.length)))
    const greeted = yield* Effect.promise(() =>
      client.callTool({ name: "test_input_required_result_elicitation", arguments: {} })
    )
    assert.deepStrictEqual(greeted.content, [{ type: "text", text: "Hello, Ada!" }])
    assert.deepStrictEqual(elicited, ["What is your name?"])
    const read = yield* Effect.promise(() => client.readResource({ uri: "test://static-text" }))
    assert.deepStrictEqual(read.contents, [
      { uri: "test://static-text", mimeType: "text/plain", text: "This is the content of the static text resource." }
    ])
    const prompt = yield* Effect.promise(() => client.getPrompt({ name: "test_simple_prompt" }))
    assert.deepStrictEqual(prompt.messages, [
      { role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }
    ])
  })
