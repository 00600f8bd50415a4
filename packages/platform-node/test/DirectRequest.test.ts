/**
 * The direct path of platform-node's `NodeHttpClient.layer` (a body held in
 * memory, `internal/directRequest.ts`) against a real `node:http` server on
 * 127.0.0.1 (and ::1): the URL's target as sent (path and query, IPv6 literal,
 * credentials), the reply read whole, the body bound, a connection lost mid-body,
 * interruption before the reply destroys the request (a bare one too), a
 * scoped request destroyed with its scope, and a streamed body still going
 * through effect's client.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as BareRequests from "@effect-mcp/http/BareRequests"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void

/** A server on 127.0.0.1 answering every request with `handler` once its body is in; closed with the scope. */
const serve = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly close: () => void }>((resume) => {
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => handler(req, res, Buffer.concat(chunks).toString("utf8")))
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      )
    }),
    (server) => Effect.sync(server.close)
  )

const post = (url: string, text: string) =>
  HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText(text, "application/json"))

const echo: Handler = (req, res, body) => {
  res.setHeader("content-type", "application/json")
  res.setHeader("set-cookie", "a=1")
  res.end(JSON.stringify({ method: req.method, body, length: req.headers["content-length"] }))
}

describe("NodeHttpClient direct requests", () => {
  it.live("reads the reply whole: status, headers, cookies, JSON", () =>
    Effect.gen(function* () {
      const { url } = yield* serve(echo)
      const http = yield* HttpClient.HttpClient
      const response = yield* http.execute(post(url, `{"x":1}`))
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers["content-type"], "application/json")
      assert.strictEqual(response.cookies.cookies.a?.value, "1")
      assert.deepStrictEqual(yield* response.json, { method: "POST", body: `{"x":1}`, length: "7" })
      // A second read gets the same bytes.
      assert.include(yield* response.text, `"length":"7"`)
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("sends to the URL's target: path and query, port, credentials as Basic authorization", () =>
    Effect.gen(function* () {
      const { url } = yield* serve((req, res) => {
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify({ path: req.url, host: req.headers.host, authorization: req.headers.authorization }))
      })
      const target = new URL(url)
      target.pathname = "/mcp/a%20b"
      target.username = "ann"
      target.password = "p@ss:word"
      const authorization = `Basic ${Buffer.from("ann:p@ss:word").toString("base64")}`
      const http = yield* HttpClient.HttpClient
      // Bare: the URL is the request's own string.
      const bare = yield* http
        .execute(post(target.href, "{}"))
        .pipe(Effect.provideService(BareRequests.BareRequests, true))
      assert.deepStrictEqual(yield* bare.json, { path: "/mcp/a%20b", host: target.host, authorization })
      // Through HttpClient.make, with a query.
      target.search = "?x=1&y=%2F"
      const wrapped = yield* http.execute(post(target.href, "{}"))
      assert.deepStrictEqual(yield* wrapped.json, { path: "/mcp/a%20b?x=1&y=%2F", host: target.host, authorization })
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("sends to an IPv6 literal host", () =>
    Effect.gen(function* () {
      const port = yield* Effect.acquireRelease(
        Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
          const server = createServer((req, res) => res.end(req.headers.host))
          server.listen(0, "::1", () =>
            resume(
              Effect.succeed({
                port: (server.address() as AddressInfo).port,
                close: () => {
                  server.closeAllConnections()
                  server.close()
                }
              })
            )
          )
        }),
        (server) => Effect.sync(server.close)
      )
      const http = yield* HttpClient.HttpClient
      const response = yield* http
        .execute(post(`http://[::1]:${port.port}/mcp`, "{}"))
        .pipe(Effect.provideService(BareRequests.BareRequests, true))
      assert.strictEqual(yield* response.text, `[::1]:${port.port}`)
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("reads a reply that comes in several chunks", () =>
    Effect.gen(function* () {
      const { url } = yield* serve((_req, res) => {
        res.write("a".repeat(70_000))
        setImmediate(() => res.end("b"))
      })
      const http = yield* HttpClient.HttpClient
      const text = yield* http.execute(post(url, "{}")).pipe(Effect.flatMap((response) => response.text))
      assert.strictEqual(text.length, 70_001)
      assert.isTrue(text.endsWith("ab"))
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("a body over MaxBodySize fails with a decode error", () =>
    Effect.gen(function* () {
      const { url } = yield* serve((_req, res) => res.end("x".repeat(2_000)))
      const http = yield* HttpClient.HttpClient
      const exit = yield* http.execute(post(url, "{}")).pipe(
        Effect.flatMap((response) => response.text),
        Effect.provideService(HttpIncomingMessage.MaxBodySize, 1_000 as never),
        Effect.exit
      )
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? Exit.findErrorOption(exit) : undefined
      assert.strictEqual(error?._tag === "Some" ? error.value.reason._tag : undefined, "DecodeError")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("a connection lost mid-body fails the read", () =>
    Effect.gen(function* () {
      const { url } = yield* serve((_req, res) => {
        res.writeHead(200, { "content-length": "100" })
        res.write("partial", () => res.socket?.destroy())
      })
      const http = yield* HttpClient.HttpClient
      const exit = yield* http.execute(post(url, "{}")).pipe(
        Effect.flatMap((response) => response.text),
        Effect.exit
      )
      assert.isTrue(Exit.isFailure(exit))
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("a streamed body goes through effect's client", () =>
    Effect.gen(function* () {
      const { url } = yield* serve(echo)
      const http = yield* HttpClient.HttpClient
      const request = HttpClientRequest.post(url).pipe(
        HttpClientRequest.bodyStream(Stream.make(new TextEncoder().encode("ab"), new TextEncoder().encode("cd")), {
          contentType: "application/json"
        })
      )
      const body = yield* http.execute(request).pipe(Effect.flatMap((response) => response.json))
      // Chunked: no content-length went with it, so the echo has none.
      assert.deepStrictEqual(body, { method: "POST", body: "abcd" })
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("a bare request: the reply read whole; query parameters take the usual way", () =>
    Effect.gen(function* () {
      const { url } = yield* serve((req, res, body) => res.end(JSON.stringify({ url: req.url, body })))
      const http = yield* HttpClient.HttpClient
      const bare = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provideService(effect, BareRequests.BareRequests, true)
      const plain = yield* bare(http.execute(post(url, "a")).pipe(Effect.flatMap((response) => response.json)))
      assert.deepStrictEqual(plain, { url: "/", body: "a" })
      const withQuery = yield* bare(
        http
          .execute(post(url, "b").pipe(HttpClientRequest.setUrlParam("x", "1")))
          .pipe(Effect.flatMap((response) => response.json))
      )
      assert.deepStrictEqual(withQuery, { url: "/?x=1", body: "b" })
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  for (const bare of [false, true]) {
    it.live(`interrupted before the reply, a ${bare ? "bare" : "plain"} request is destroyed`, () =>
      Effect.gen(function* () {
        const arrived = yield* Deferred.make<void>()
        const closed = yield* Deferred.make<void>()
        const { url } = yield* serve((req) => {
          req.socket.once("close", () => Deferred.doneUnsafe(closed, Exit.void))
          Deferred.doneUnsafe(arrived, Exit.void)
        })
        const http = yield* HttpClient.HttpClient
        const fiber = yield* Effect.forkChild(
          Effect.provideService(http.execute(post(url, "{}")), BareRequests.BareRequests, bare)
        )
        yield* Deferred.await(arrived)
        yield* Fiber.interrupt(fiber)
        yield* Deferred.await(closed)
      }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
    )
  }

  it.live("a request of HttpClient.withScope is destroyed when its scope closes", () =>
    Effect.gen(function* () {
      const arrived = yield* Deferred.make<void>()
      const closed = yield* Deferred.make<void>()
      const { url } = yield* serve((req, res) => {
        req.socket.once("close", () => Deferred.doneUnsafe(closed, Exit.void))
        // Headers only: the body never comes, so the request stays open until the client lets go.
        res.writeHead(200, { "content-type": "text/plain" })
        res.flushHeaders()
        Deferred.doneUnsafe(arrived, Exit.void)
      })
      const http = HttpClient.withScope(yield* HttpClient.HttpClient)
      const scope = yield* Scope.make()
      const response = yield* http.execute(post(url, "{}")).pipe(Effect.provideService(Scope.Scope, scope))
      assert.strictEqual(response.status, 200)
      yield* Deferred.await(arrived)
      yield* Scope.close(scope, Exit.void)
      yield* Deferred.await(closed)
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )
})
