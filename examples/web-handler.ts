/**
 * A server as a web-standard handler, `(request: Request) => Promise<Response>`:
 * what Cloudflare Workers (`export default { fetch: handler }`), Deno
 * (`Deno.serve(handler)`) and Bun (`Bun.serve({ fetch: handler, idleTimeout: 0 })`) serve.
 * Here nothing listens: the handler gets web `Request`s in this process, from
 * an effect-mcp client whose `fetch` is the handler (a stateful 2025-11-25
 * session, then the stateless 2026-07-28 revision) and from plain `Request`s
 * the safe defaults refuse (a foreign host, an oversize body).
 *
 *   node --conditions=@effect-mcp/source examples/web-handler.ts
 *
 * Checks every answer and exits non-zero if one differs. See docs/runtimes.md.
 */
import * as assert from "node:assert/strict"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as WebHandler from "@effect-mcp/server/WebHandler"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

// The server: two tools, one of them reporting progress.
const Server = Tool.layer(
  Tool.make("greet", {
    input: Schema.Struct({ name: Schema.String }),
    handler: ({ name }) => Effect.succeed(`hello, ${name}`)
  }),
  Tool.make("count", {
    input: Schema.Struct({ to: Schema.Int }),
    handler: ({ to }) =>
      Effect.gen(function* () {
        for (let i = 1; i <= to; i++) yield* ServerRequest.progress({ progress: i, total: to })
        return `counted to ${to}`
      })
  })
).pipe(Layer.provideMerge(McpServer.layer({ name: "web-greeter", version: "1.0.0" })))

// One handler for every request (made once, as a Worker's module does). The defaults: Host/Origin checked
// against the loopback names (a deployed handler lists its own in `allowedHosts`), 4 MiB bodies.
const app = WebHandler.make(Server, { maxBodyBytes: 64 * 1024 })

// A client whose HTTP requests are web Requests handed to the handler: no socket anywhere.
const clientOf = (supportedVersions?: McpClient.Options["supportedVersions"]) =>
  McpClient.layer({ clientInfo: { name: "web-handler-example", version: "1.0.0" }, supportedVersions }).pipe(
    Layer.provide(StreamableHttpClient.layer({ url: "http://localhost/mcp" })),
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(Layer.succeed(FetchHttpClient.Fetch, (input, init) => app.handler(new Request(input, init))))
  )

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

/** A session of a client: a call, and a call whose progress arrives while it runs (SSE). */
const session = Effect.gen(function* () {
  const client = yield* McpClient.McpClient
  const greeted = textOf(yield* client.callTool("greet", { name: "Ada" }))
  assert.equal(greeted, "hello, Ada")
  const updates: Array<number> = []
  let counted = ""
  yield* client.callToolWithProgress("count", { to: 3 }).pipe(
    Stream.runForEach((event) =>
      Effect.sync(() => {
        if (event._tag === "Progress") updates.push(event.update.progress)
        else counted = textOf(event.value)
      })
    )
  )
  assert.deepEqual(updates, [1, 2, 3])
  assert.equal(counted, "counted to 3")
  yield* Console.log(`${client.revision}: greet -> ${greeted}; count -> progress ${updates.join(", ")}, ${counted}`)
  return client.revision
})

/** The status the handler answers a POST of `body` to `url` with. */
const statusOf = (url: string, body: string) =>
  Effect.map(
    Effect.promise(() =>
      app.handler(
        new Request(url, {
          method: "POST",
          headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
          body
        })
      )
    ),
    (response) => response.status
  )

const program = Effect.gen(function* () {
  // A stateful session: the handler keeps it (Mcp-Session-Id, the GET stream) between requests.
  const stateful = yield* session.pipe(Effect.provide(clientOf(["2025-11-25"])))
  assert.equal(stateful, "2025-11-25")
  // The client's default: 2026-07-28, where every request stands alone.
  const stateless = yield* session.pipe(Effect.provide(clientOf()))
  assert.equal(stateless, "2026-07-28")

  const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
  const foreign = yield* statusOf("http://evil.example.com/mcp", ping)
  assert.equal(foreign, 403)
  yield* Console.log(`POST http://evil.example.com/mcp -> ${foreign} (not an allowed host)`)
  const oversize = yield* statusOf("http://localhost/mcp", JSON.stringify({ padding: "x".repeat(100 * 1024) }))
  assert.equal(oversize, 413)
  yield* Console.log(`a 100 KiB body -> ${oversize} (maxBodyBytes: 64 KiB)`)

  // Closes every session and releases the server.
  yield* Effect.promise(() => app.dispose())
  yield* Console.log("ok: web-handler")
})

NodeRuntime.runMain(program)
