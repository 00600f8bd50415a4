/**
 * Serving over HTTP in one call, and a program holding two named clients:
 * the server listens with `NodeMcpServer.layerHttp` (Streamable HTTP at
 * `/mcp`, the legacy HTTP+SSE transport at `/sse` for older clients, the
 * default security options), then two clients of that server, one per
 * transport, each under a service of its own, call it side by side. A
 * request carrying a foreign `Host` is refused.
 *
 *   node --conditions=@effect-mcp/source examples/serve-http.ts
 *
 * Checks every answer and exits non-zero if one differs. A real server's
 * `main` is one line: `NodeRuntime.runMain(NodeMcpServer.serveHttp(Server, { port: 3000 }))`.
 */
import * as assert from "node:assert/strict"
import * as http from "node:http"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// The server: one tool, composed as a Layer.
const Greet = Tool.make("greet", {
  description: "Greets someone",
  input: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) => Effect.succeed(`hello, ${name}`)
})
const Server = Tool.layer(Greet).pipe(Layer.provideMerge(McpServer.layer({ name: "greeter", version: "1.0.0" })))

// Every option has a default: 127.0.0.1, a free port (0), `/mcp`, Host/Origin checks, 4 MiB bodies.
const Listening = NodeMcpServer.layerHttp(Server, { legacySse: true })

// Two clients in one program: each is a service of its own, connected over its own transport.
class Modern extends Context.Service<Modern, McpClient.McpClientShape>()("example/Modern") {}
class Legacy extends Context.Service<Legacy, McpClient.McpClientShape>()("example/Legacy") {}

const clientInfo = { name: "serve-http-example", version: "1.0.0" }
const clientsOf = (base: string) =>
  Layer.mergeAll(
    Layer.effect(Modern, McpClient.connect(NodeHttpClient.layerStreamableHttp({ url: `${base}/mcp` }), { clientInfo })),
    Layer.effect(
      Legacy,
      McpClient.connect(NodeHttpClient.layerSse({ url: `${base}/sse` }), {
        clientInfo,
        supportedVersions: ["2024-11-05"]
      })
    )
  )

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

/** The status a POST to `url` with the given `Host` header gets. */
const statusWithHost = (url: string, host: string) =>
  Effect.callback<number>((resume) => {
    const request = http.request(url, { method: "POST", headers: { host, "content-type": "application/json" } })
    request.on("response", (response) => {
      response.resume()
      resume(Effect.succeed(response.statusCode ?? 0))
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.end("{}")
  })

const program = Effect.gen(function* () {
  const base = yield* NodeMcpServer.url
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/)
  yield* Console.log(`listening on ${base}/mcp and ${base}/sse`)

  yield* Effect.gen(function* () {
    const modern = yield* Modern
    const legacy = yield* Legacy
    const [a, b] = yield* Effect.all(
      [modern.callTool("greet", { name: "Ada" }), legacy.callTool("greet", { name: "Alan" })],
      { concurrency: 2 }
    )
    assert.equal(textOf(a), "hello, Ada")
    assert.equal(textOf(b), "hello, Alan")
    assert.equal(legacy.revision, "2024-11-05")
    yield* Console.log(`Streamable HTTP (${modern.revision}) -> ${textOf(a)}`)
    yield* Console.log(`legacy SSE (${legacy.revision}) -> ${textOf(b)}`)
  }).pipe(Effect.provide(clientsOf(base)))

  const refused = yield* statusWithHost(`${base}/mcp`, "evil.example.com")
  assert.equal(refused, 403)
  yield* Console.log(`Host: evil.example.com -> ${refused}`)
  yield* Console.log("serve-http: ok")
}).pipe(Effect.provide(Listening))

NodeRuntime.runMain(program)
