/**
 * SEP-2243 end to end over loopback sockets: an McpClient over the
 * Streamable HTTP client, against a stateless (2026-07-28) Streamable HTTP
 * server that checks the `Mcp-Param-*` headers of every `tools/call`. The
 * client lists only the tools whose `x-mcp-header` annotations are valid and
 * its calls carry the headers without any wiring by the user.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"

const TIMEOUT = 20_000

const tools = [
  {
    name: "route",
    inputSchema: {
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        options: { type: "object", properties: { dryRun: { type: "boolean", "x-mcp-header": "Dry-Run" } } },
        note: { type: "string" }
      }
    }
  },
  // `number` may not be mirrored: a client must leave this tool out.
  {
    name: "broken",
    inputSchema: { type: "object", properties: { score: { type: "number", "x-mcp-header": "Score" } } }
  },
  { name: "plain", inputSchema: { type: "object", properties: { text: { type: "string" } } } }
]

const handlers = new Map<string, Session.Handler>([
  ["tools/list", () => Effect.succeed({ tools })],
  [
    "tools/call",
    (params) => {
      const p = params as { readonly name: string; readonly arguments?: unknown }
      return Effect.succeed({ content: [{ type: "text", text: `${p.name}:${JSON.stringify(p.arguments ?? {})}` }] })
    }
  ]
])

const serve = Effect.gen(function* () {
  const server = yield* StreamableHttpServer.make({
    session: ServerSession.make({
      serverInfo: { name: "param-headers", version: "1.0.0" },
      capabilities: { tools: {} },
      handlers
    }),
    paramHeaders: (name) => {
      const tool = tools.find((t) => t.name === name)
      return tool === undefined ? undefined : StreamableHttpServer.paramHeadersOf(tool.inputSchema)
    }
  })
  const context = yield* Layer.build(NodeHttpServer.layer(HttpRouter.add("*", "/mcp", server.handler)))
  return `${yield* NodeHttpServer.url.pipe(Effect.provideContext(context))}/mcp`
})

/** An McpClient over the Streamable HTTP client; `posts` records the headers of every POST. */
const connect = (url: string) =>
  Effect.gen(function* () {
    const posts: Array<Readonly<Record<string, string>>> = []
    const node = yield* Effect.map(Layer.build(NodeHttpClient.layer), (c) => Context.get(c, HttpClient.HttpClient))
    const http = HttpClient.tapRequest(node, (request) =>
      Effect.sync(() => {
        if (request.method === "POST") posts.push(request.headers)
      })
    )
    const transport = yield* StreamableHttpClient.make({ url }).pipe(Effect.provideService(HttpClient.HttpClient, http))
    const client = yield* McpClient.make({
      clientInfo: { name: "param-headers-client", version: "1.0.0" },
      supportedVersions: ["2026-07-28"]
    }).pipe(Effect.provideService(Transport.Transport, transport))
    return { client, posts }
  })

const warnings: Array<string> = []
const capture = Logger.layer([
  Logger.make((options) => {
    if (options.logLevel === "Warn") warnings.push(String(options.message))
  })
])

describe("x-mcp-header over Streamable HTTP (2026-07-28)", () => {
  it.live(
    "invalid tools are not listed; calls of a listed tool carry the Mcp-Param headers the server checks",
    () =>
      Effect.gen(function* () {
        warnings.length = 0
        const url = yield* serve
        const { client, posts } = yield* connect(url)
        const listed = yield* Stream.runCollect(client.tools)
        assert.deepStrictEqual(
          listed.map((t) => t.name),
          ["route", "plain"]
        )
        assert.strictEqual(warnings.length, 1)
        assert.include(warnings[0], "broken")
        assert.include(warnings[0], "only string, integer and boolean may be mirrored")

        const args = { region: "Zürich north", options: { dryRun: true }, note: "n" }
        const result = yield* client.callTool("route", args)
        assert.deepStrictEqual(result.content, [{ type: "text", text: `route:${JSON.stringify(args)}` }])
        const sent = posts.at(-1)!
        assert.strictEqual(sent["mcp-name"], "route")
        assert.strictEqual(sent["mcp-param-region"], `=?base64?${Buffer.from("Zürich north").toString("base64")}?=`)
        assert.strictEqual(sent["mcp-param-dry-run"], "true")
        assert.isUndefined(sent["mcp-param-note"])

        yield* client.callTool("route", { region: "eu-west" })
        assert.strictEqual(posts.at(-1)!["mcp-param-region"], "eu-west")
        assert.isUndefined(posts.at(-1)!["mcp-param-dry-run"])
        yield* client.callTool("plain", { text: "hello" })
        assert.isFalse(Object.keys(posts.at(-1)!).some((name) => name.startsWith("mcp-param-")))
      }).pipe(Effect.provide(capture)),
    TIMEOUT
  )

  it.live(
    "the server does check: a call made before any listing goes without headers, is refused, and the client lists then calls again",
    () =>
      Effect.gen(function* () {
        const url = yield* serve
        const { client, posts } = yield* connect(url)
        const before = posts.length
        yield* client.callTool("route", { region: "eu-west" })
        const sent = posts.slice(before)
        // The call without headers (refused with HeaderMismatch), the listing, the call with them.
        assert.deepStrictEqual(
          sent.map((headers) => headers["mcp-method"]),
          ["tools/call", "tools/list", "tools/call"]
        )
        assert.isFalse(Object.keys(sent[0]!).some((name) => name.startsWith("mcp-param-")))
        assert.strictEqual(sent[2]!["mcp-param-region"], "eu-west")
      }).pipe(Effect.provide(capture)),
    TIMEOUT
  )
})
