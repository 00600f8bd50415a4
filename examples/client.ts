/**
 * A client (a host's connection to one server): spawns the notes server over
 * stdio and uses it — typed tool calls, a typed failure, paged Streams,
 * resources, prompts, completion — and answers the server's own requests
 * (sampling, elicitation, roots) with handler Layers.
 *
 *   node --conditions=@effect-mcp/source examples/client.ts
 *
 * Checks every answer and exits non-zero if one differs.
 */
import * as assert from "node:assert/strict"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { NoteNotFound, spawnArgs } from "./notes-server.ts"

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

// The server's requests are answered by services the client finds when it is built; each one also
// decides what the client declares at initialize (no handler, no capability: the server is told so).
const Sampling = SamplingHandler.layer((params) =>
  Effect.succeed({
    role: "assistant" as const,
    content: { type: "text" as const, text: `${params.messages.length} message(s) read` },
    model: "example-model"
  })
)
const Elicitation = ElicitationHandler.layer({
  form: (params) => Effect.succeed({ action: "accept", content: { confirm: params.message.startsWith("Clear") } })
})
const Roots = RootsHandler.layer([{ uri: "file:///home/me/notes", name: "notes" }])

const Client = McpClient.layer({ clientInfo: { name: "example-client", version: "1.0.0" } }).pipe(
  Layer.provide([Sampling, Elicitation, Roots]),
  Layer.provide(NodeStdio.layerClient({ command: process.execPath, args: spawnArgs }))
)

const program = Effect.gen(function* () {
  const client = yield* McpClient.McpClient
  yield* Console.log(`connected to ${client.serverInfo?.name} over ${client.revision}`)

  // A Stream over every page (the server's pages hold 2 tools; the Stream reads all 3 pages).
  const tools = yield* Stream.runCollect(client.tools)
  assert.equal(tools.length, 6)
  const firstPage = yield* client.listTools()
  assert.equal(firstPage.tools.length, 2)
  assert.equal(typeof firstPage.nextCursor, "string")

  // Structured output decoded with the caller's Schema.
  const added = yield* client.callTool(
    "add_note",
    { title: "todo", body: "write docs" },
    { outputSchema: Schema.Struct({ id: Schema.String }) }
  )
  yield* Console.log(`add_note -> id ${added.structuredContent.id}`)
  assert.equal(added.structuredContent.id, "3")

  // A typed failure arrives with its fields: decoded with the same Schema class the tool declares.
  const missing = yield* client.callTool("get_note", { id: "7" }, { failure: NoteNotFound }).pipe(Effect.flip)
  assert.ok(missing instanceof NoteNotFound)
  yield* Console.log(`get_note 7 -> ${missing._tag} ${JSON.stringify({ id: missing.id })}`)
  assert.equal(missing.id, "7")

  // Tools that ask the client: the handlers above answer.
  const summary = textOf(yield* client.callTool("summarize", { id: "1" }))
  const cleared = textOf(yield* client.callTool("confirm_clear", {}))
  const roots = textOf(yield* client.callTool("workspace", {}))
  yield* Console.log(`summarize -> ${summary}; confirm_clear -> ${cleared}; workspace -> ${roots}`)
  assert.equal(summary, "summary: 1 message(s) read")
  assert.equal(cleared, "cleared")
  assert.equal(roots, "file:///home/me/notes")

  // Resources, templates, prompts and completion.
  const templates = yield* Stream.runCollect(client.resourceTemplates)
  assert.deepEqual(
    templates.map((t) => t.uriTemplate),
    ["notes://{id}"]
  )
  const read = yield* client.readResource("notes://2")
  const content = read.contents[0]
  assert.equal(content !== undefined && "text" in content ? content.text : undefined, "an MCP server from Layers")
  const completion = yield* client.complete({ type: "ref/resource", uri: "notes://{id}" }, { name: "id", value: "" })
  yield* Console.log(`complete notes://{id} -> ${completion.completion.values.join(", ")}`)
  assert.deepEqual(completion.completion.values, ["1", "2", "3"])
  const prompt = yield* client.getPrompt("review", { id: "1" })
  assert.equal(prompt.messages.length, 1)

  // Reading a URI no template matches fails with the protocol's "resource not found".
  const notFound = yield* client.readResource("notes://9").pipe(Effect.flip)
  yield* Console.log(`read notes://9 -> ${notFound._tag}`)
  assert.ok(notFound._tag === "ResourceNotFound" || notFound._tag === "InvalidParams")

  yield* Console.log("ok: client")
})

NodeRuntime.runMain(program.pipe(Effect.provide(Client)))
