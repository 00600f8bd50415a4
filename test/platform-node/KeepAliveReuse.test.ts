/**
 * Keep-alive connections of platform-node's `NodeHttpClient.layer` against a
 * real `node:http` server: a request written on a reused connection the
 * server had already closed (its idle timeout racing the request) is sent
 * again on a new connection, and only such a request: one that may have
 * reached a handler is reported, never sent twice. The server counts handler
 * runs per MCP request id, so a duplicate shows.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as PlatformNodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { createServer, type Server, type ServerOptions } from "node:http"
import type { AddressInfo, Socket } from "node:net"

const clientInfo = { name: "keep-alive-client", version: "1.0.0" }

/**
 * A Streamable HTTP server counting handler runs per request id. `racing`
 * closes idle connections 1 ms after a response and sends no
 * `Keep-Alive: timeout` hint (as many proxies), so the client keeps reusing
 * connections the server is closing; `keep-alive` keeps them (Node's
 * defaults); `close` closes each after its response. The tools: `echo`;
 * `cut` (the server writes the start of a status line, then drops the
 * connection); `drop` (drops it without a byte).
 */
const serve = (mode: "racing" | "keep-alive" | "close") =>
  Effect.gen(function* () {
    const runs = new Map<string, number>()
    // The connections carrying a POST: `cut` and `drop` act on them all (the one carrying the call among them;
    // the others are idle, and the client drops an idle connection that was sent bytes or closed).
    const posts = new Set<Socket>()
    const handlers = new Map<string, Session.Handler>([
      [
        "tools/call",
        (params) =>
          Effect.gen(function* () {
            const current = yield* CurrentRequest.CurrentRequest
            const key = String(current.id)
            runs.set(key, (runs.get(key) ?? 0) + 1)
            const name = (params as { readonly name: string }).name
            for (const socket of name === "cut" || name === "drop" ? posts : []) {
              if (name === "cut") socket.write("HTTP/1.1 200")
              socket.destroy()
            }
            return { content: [{ type: "text", text: key }] }
          })
      ]
    ])
    const session = ServerSession.make({
      serverInfo: { name: "s", version: "1" },
      capabilities: { tools: {} },
      handlers
    })
    const mcp = yield* StreamableHttpServer.make({ session, responseMode: "json" })
    const options: ServerOptions = mode === "racing" ? { keepAliveTimeout: 1, keepAliveTimeoutBuffer: 0 } : {}
    let node: Server | undefined
    yield* Layer.build(
      HttpRouter.serve(HttpRouter.add("*", "/mcp", mcp.handler), { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provide(
          PlatformNodeHttpServer.layer(() => (node = createServer(options)), { host: "127.0.0.1", port: 0 })
        )
      )
    )
    node!.prependListener("request", (request, response) => {
      if (request.method === "POST" && !posts.has(request.socket)) {
        posts.add(request.socket)
        request.socket.once("close", () => posts.delete(request.socket))
      }
      // A Connection header of our own: Node then adds no `Keep-Alive: timeout` hint.
      if (mode === "racing") response.setHeader("connection", "keep-alive")
      if (mode === "close") response.setHeader("connection", "close")
    })
    const url = `http://127.0.0.1:${(node!.address() as AddressInfo).port}/mcp`
    const client = yield* McpClient.connect(NodeHttpClient.layerStreamableHttp({ url }), {
      clientInfo,
      supportedVersions: ["2025-11-25"]
    })
    return { client, runs }
  })

/** The calls the server's handler ran more than once (none expected). */
const duplicates = (runs: Map<string, number>) => [...runs].filter(([, n]) => n !== 1)

describe("NodeHttpClient keep-alive connections", () => {
  it.live(
    "many sequential calls while the server closes idle connections after 1 ms: none fails, none runs twice",
    () =>
      Effect.gen(function* () {
        const { client, runs } = yield* serve("racing")
        const calls = 300
        for (let i = 0; i < calls; i++) yield* client.callTool("echo", {})
        assert.strictEqual(runs.size, calls)
        assert.deepStrictEqual(duplicates(runs), [])
      }).pipe(Effect.scoped)
  )

  it.live("a reused connection cut after the response began is reported, not resent", () =>
    Effect.gen(function* () {
      const { client, runs } = yield* serve("keep-alive")
      yield* client.callTool("echo", {})
      const error = yield* Effect.flip(client.callTool("cut", {}))
      assert.match(String(error), /POST .* failed/)
      assert.strictEqual(runs.size, 2)
      assert.deepStrictEqual(duplicates(runs), [])
    }).pipe(Effect.scoped)
  )

  it.live("a new connection dropped without a byte of response is reported, not resent", () =>
    Effect.gen(function* () {
      // The server closes every connection after its response: each call opens a new one.
      const { client, runs } = yield* serve("close")
      yield* client.callTool("echo", {})
      const error = yield* Effect.flip(client.callTool("drop", {}))
      assert.match(String(error), /POST .* failed/)
      assert.strictEqual(runs.size, 2)
      assert.deepStrictEqual(duplicates(runs), [])
    }).pipe(Effect.scoped)
  )

  it.live("a request cut short by the client's own close is not sent again", () =>
    Effect.gen(function* () {
      // Counts each body; holds the first "held" request unanswered, answers everything else at once.
      const arrivals = new Map<string, number>()
      const held = yield* Deferred.make<void>()
      const server = createServer((request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => {
          const n = (arrivals.get(body) ?? 0) + 1
          arrivals.set(body, n)
          if (body === "held" && n === 1) Deferred.doneUnsafe(held, Exit.void)
          else response.end("ok")
        })
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () =>
          Effect.callback<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
      const clientScope = yield* Scope.make()
      const http = Context.get(yield* Layer.buildWithScope(NodeHttpClient.layer, clientScope), HttpClient.HttpClient)
      const post = (text: string) =>
        Effect.flatMap(http.execute(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText(text))), (r) => r.text)
      // The first request leaves its connection open; the second is written on it, and held.
      assert.strictEqual(yield* post("first"), "ok")
      const second = yield* Effect.forkDetach(post("held"))
      yield* Deferred.await(held)
      // Closing the client resets the connection under it: this side's doing, not a stale connection.
      yield* Scope.close(clientScope, Exit.void)
      const exit = yield* Fiber.await(second)
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(
        [...arrivals],
        [
          ["first", 1],
          ["held", 1]
        ]
      )
    }).pipe(Effect.scoped)
  )
})
