/**
 * A gateway: two instances of the notes server over stdio ("work" and
 * "home") behind one MCP server, served over Streamable HTTP, and a client of
 * the gateway that sees one catalog (every name carries its upstream), calls
 * routed to their upstream, progress relayed, and an upstream's elicitation
 * and sampling answered by the client whose call asked.
 *
 *   node --conditions=@effect-mcp/source examples/gateway.ts
 *
 * Checks every answer and exits non-zero if one differs. The same gateway from
 * a file is one command: `effect-mcp gateway --config mcp.json` (docs/gateway.md).
 */
import * as assert from "node:assert/strict"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { spawnArgs } from "./notes-server.ts"

// The gateway: a server Layer built from a host of the configured upstreams.
const Server = Gateway.layer({
  server: { name: "notes-gateway", version: "1.0.0" },
  config: {
    mcpServers: {
      work: { command: process.execPath, args: spawnArgs },
      home: { command: process.execPath, args: spawnArgs }
    }
  }
}).pipe(Layer.provide(NodeConnector.layer()))

// A client of the gateway, answering the upstreams' questions itself.
const Handlers = Layer.mergeAll(
  ElicitationHandler.layer({ form: () => Effect.succeed({ action: "accept", content: { confirm: true } }) }),
  SamplingHandler.layer(() =>
    Effect.succeed({ role: "assistant", content: { type: "text", text: "two items" }, model: "scripted" })
  )
)

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

const program = Effect.gen(function* () {
  const base = yield* NodeMcpServer.url
  const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url: `${base}/mcp` }), {
    clientInfo: { name: "gateway-example", version: "1.0.0" }
  }).pipe(Effect.provide(Handlers))

  // One catalog: both upstreams offer the same tools, each under its upstream's prefix.
  const names = (yield* Stream.runCollect(client.tools)).map((tool) => tool.name)
  yield* Console.log(`catalog: ${names.length} tools, ${names.filter((n) => n.startsWith("work__")).join(", ")}`)
  assert.equal(names.length, 12)
  assert.ok(names.includes("home__add_note"))

  // Routed by name: each upstream keeps its own notes.
  const added = yield* client.callTool("work__add_note", { title: "standup", body: "at ten" })
  const id = (added.structuredContent as { readonly id: string }).id
  const work = yield* client.callTool("work__get_note", { id })
  const home = yield* client.callTool("home__get_note", { id })
  yield* Console.log(`work__get_note ${id} -> ${textOf(work)}; home__get_note ${id} -> ${textOf(home)}`)
  assert.equal(textOf(work), "at ten")
  assert.equal(home.isError, true)

  // Progress of the upstream, relayed as it comes.
  const steps: Array<number> = []
  yield* client
    .callToolWithProgress("home__count_to", { to: 3, stepMs: 10 })
    .pipe(
      Stream.runForEach((event) => Effect.sync(() => event._tag === "Progress" && steps.push(event.update.progress)))
    )
  yield* Console.log(`home__count_to -> progress ${steps.join(", ")}`)
  assert.deepEqual(steps, [1, 2, 3])

  // The upstream asks (an elicitation, a sampling request): the gateway asks the client whose call it serves.
  const cleared = yield* client.callTool("home__confirm_clear", {})
  const summary = yield* client.callTool("work__summarize", { id })
  yield* Console.log(`home__confirm_clear -> ${textOf(cleared)}; work__summarize -> ${textOf(summary)}`)
  assert.equal(textOf(cleared), "cleared")
  assert.equal(textOf(summary), "summary: two items")
  yield* Console.log("ok: gateway")
})

NodeRuntime.runMain(program.pipe(Effect.scoped, Effect.provide(NodeMcpServer.layerHttp(Server))))
