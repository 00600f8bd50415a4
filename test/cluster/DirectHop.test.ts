/**
 * The direct hop's Node client (packages/cluster internal/nodeHop.ts) against
 * a listener speaking the hop's frames on loopback: what it sends (the
 * owner's secret once per connection, the client's own headers), a whole reply and a streamed one, and the outcomes a
 * receiving process acts on: Unsent when nothing could be connected to (it may
 * send the exchange to the shard's next owner; also when the owner's machine
 * does not answer a connect in time), Refused when the owner no longer holds
 * the shard, Lost when the owner was reached and died before its reply head,
 * and a streamed reply that fails when cut before its end.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import * as DirectHop from "../../packages/cluster/src/DirectHop.ts"
import * as HopServer from "../../packages/cluster/src/internal/hopServer.ts"
import * as NodeHop from "../../packages/cluster/src/internal/nodeHop.ts"
import { HEADER_CLIENT, HEADER_NEW_SESSION } from "../../packages/cluster/src/internal/forward.ts"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { owner, unanswering } from "./hopOwner.ts"
import { freePort } from "./support.ts"

const hopWith = (connectTimeoutMs?: number) =>
  Effect.acquireRelease(
    Effect.sync(() => NodeHop.make({ origin: "http://127.0.0.1:1", secret: "mine" }, connectTimeoutMs)),
    (made) => Effect.sync(made.close)
  )

const hop = hopWith()

/** An owner that answers every exchange with an empty JSON-RPC result. */
const answering = owner((_, response) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end('{"jsonrpc":"2.0","id":1,"result":{}}')
})

const exchange: DirectHop.Request = {
  method: "POST",
  url: "/mcp?x=1",
  headers: {
    host: "mcp.example.com",
    authorization: "Bearer token",
    "mcp-session-id": "s1",
    "content-type": "application/json",
    "content-length": "999"
  },
  body: '{"jsonrpc":"2.0","id":1,"method":"ping"}'
}

describe("the direct hop's Node client", () => {
  it.live("sends the client's headers and body with the owner's secret; a whole reply comes back as bytes", () =>
    Effect.gen(function* () {
      const { target, seen, hellos } = yield* owner((_, response) => {
        response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" })
        response.end('{"jsonrpc":"2.0","id":1,"result":{}}')
      })
      const client = yield* hop
      const result = yield* client.send(target, exchange)
      assert.strictEqual(result._tag, "Reply")
      if (result._tag !== "Reply") return
      assert.strictEqual(result.status, 200)
      assert.strictEqual(result.contentType, "application/json")
      assert.strictEqual(new TextDecoder().decode(result.body), '{"jsonrpc":"2.0","id":1,"result":{}}')
      assert.isUndefined(result.stream)
      // The receiving server frames the body itself.
      assert.strictEqual(result.headers["mcp-session-id"], "s1")
      for (const name of ["content-length", "connection", "keep-alive", "date", "content-type"]) {
        assert.isUndefined(result.headers[name], name)
      }
      const request = seen[0]!
      assert.strictEqual(request.url, "/mcp?x=1")
      assert.strictEqual(request.headers.host, "mcp.example.com")
      assert.strictEqual(request.headers.authorization, "Bearer token")
      // The secret opened the connection, before any request; no request carries it.
      assert.deepStrictEqual(hellos, ["s3cret"])
      assert.isUndefined(request.headers[DirectHop.HEADER_SECRET])
      // The frames carry the body's length: the client's is not passed on.
      assert.isUndefined(request.headers["content-length"])
      assert.strictEqual(request.body, exchange.body)
    }).pipe(Effect.scoped)
  )

  it.live(
    "what the receiving process says (the session to open, the client's address) reaches the owner; a client's own private headers do not",
    () =>
      Effect.gen(function* () {
        const { target, seen } = yield* answering
        const client = yield* hop
        const result = yield* client.send(target, {
          ...exchange,
          headers: { ...exchange.headers, [HEADER_NEW_SESSION]: "chosen-by-the-client", [HEADER_CLIENT]: "10.9.9.9" },
          said: { [HEADER_NEW_SESSION]: "picked-by-the-runner", [HEADER_CLIENT]: "192.0.2.7" }
        })
        assert.strictEqual(result._tag, "Reply")
        const request = seen[0]!
        assert.strictEqual(request.headers[HEADER_NEW_SESSION], "picked-by-the-runner")
        assert.strictEqual(request.headers[HEADER_CLIENT], "192.0.2.7")
        // Without anything said, a client's private headers are dropped, not carried.
        yield* client.send(target, {
          ...exchange,
          headers: { ...exchange.headers, [HEADER_NEW_SESSION]: "chosen-by-the-client", [HEADER_CLIENT]: "10.9.9.9" }
        })
        assert.isUndefined(seen[1]!.headers[HEADER_NEW_SESSION])
        assert.isUndefined(seen[1]!.headers[HEADER_CLIENT])
      }).pipe(Effect.scoped)
  )

  it.live("the headers of the client's own connection stay with it: a client's `close` does not close the hop's", () =>
    Effect.gen(function* () {
      const { target, seen, server } = yield* answering
      let connections = 0
      server.on("connection", () => connections++)
      const client = yield* hop
      const hopByHop = {
        connection: "close, x-client-thing",
        "keep-alive": "timeout=5",
        "proxy-connection": "keep-alive",
        te: "trailers",
        trailer: "x-checksum",
        upgrade: "h2c",
        expect: "100-continue",
        "transfer-encoding": "chunked"
      }
      for (let i = 0; i < 2; i++) {
        const result = yield* client.send(target, { ...exchange, headers: { ...exchange.headers, ...hopByHop } })
        assert.strictEqual(result._tag, "Reply")
      }
      // Both exchanges went on one kept-alive connection, though the client asked to close its own.
      assert.strictEqual(connections, 1)
      const request = seen[1]!
      for (const name of [
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "transfer-encoding"
      ]) {
        assert.isUndefined(request.headers[name], name)
      }
      assert.strictEqual(request.headers.authorization, "Bearer token")
      assert.isUndefined(request.headers.connection)
      assert.strictEqual(request.body, exchange.body)
    }).pipe(Effect.scoped)
  )

  it.live(
    "a header value an HTTP request could not carry (a line break) crosses as data: the exchange is answered",
    () =>
      Effect.gen(function* () {
        const { target, seen } = yield* answering
        const client = yield* hop
        const result = yield* client.send(target, { ...exchange, headers: { ...exchange.headers, "x-odd": "a\r\nb" } })
        assert.strictEqual(result._tag, "Reply")
        assert.strictEqual(seen[0]?.headers["x-odd"], "a\r\nb")
      }).pipe(Effect.scoped)
  )

  it.live(
    "pipes a streamed reply as it arrives, however long it stays silent (longer than an idle connection lives)",
    () =>
      Effect.gen(function* () {
        const { target } = yield* owner((_, response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write("event: message\ndata: 1\n\n")
          // Real time on purpose: the subject is the hop's 2 s idle timeout, which a silent stream outlives.
          setTimeout(() => response.end("event: message\ndata: 2\n\n"), 2_300)
        })
        const client = yield* hop
        const result = yield* client.send(target, exchange)
        if (result._tag !== "Reply" || result.stream === undefined) return assert.fail(`not streamed: ${result._tag}`)
        const text = (yield* Stream.runCollect(result.stream)).join("")
        assert.strictEqual(text, "event: message\ndata: 1\n\nevent: message\ndata: 2\n\n")
      }).pipe(Effect.scoped)
  )

  it.live("a streamed reply cut before its end fails: its owner was lost", () =>
    Effect.gen(function* () {
      let cut: (() => void) | undefined
      const { target } = yield* owner((_, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.write("event: message\ndata: 1\n\n")
        cut = () => response.socket?.destroy()
      })
      const client = yield* hop
      const result = yield* client.send(target, exchange)
      if (result._tag !== "Reply" || result.stream === undefined) return assert.fail(`not streamed: ${result._tag}`)
      // Cut once the head has arrived (the reply is known streamed), before its end.
      cut?.()
      const exit = yield* Effect.exit(Stream.runCollect(result.stream))
      assert.isTrue(Exit.isFailure(exit))
    }).pipe(Effect.scoped)
  )

  it.live("an owner that no longer holds the shard refuses: Refused; its other answers are replies", () =>
    Effect.gen(function* () {
      const { target } = yield* owner((request, response) => {
        if (request.headers["mcp-session-id"] === "moved") {
          response.writeHead(421, { [DirectHop.HEADER_REFUSED]: "not-owner" })
        } else response.writeHead(503, { "retry-after": "1" })
        response.end()
      })
      const client = yield* hop
      const moved = yield* client.send(target, {
        ...exchange,
        headers: { ...exchange.headers, "mcp-session-id": "moved" }
      })
      assert.strictEqual(moved._tag, "Refused")
      // Only the refusal header says the owner ran nothing: a 503 of the server's own is passed on.
      const busy = yield* client.send(target, exchange)
      assert.strictEqual(busy._tag, "Reply")
      assert.strictEqual((busy as DirectHop.Reply).status, 503)
    }).pipe(Effect.scoped)
  )

  it.live("nothing listening: Unsent (nothing ran); reached, then gone before the head: Lost", () =>
    Effect.gen(function* () {
      const client = yield* hop
      const port = yield* freePort
      const unsent = yield* client.send({ origin: `http://127.0.0.1:${port}`, secret: "x" }, exchange)
      assert.strictEqual(unsent._tag, "Unsent")
      const { target, seen } = yield* owner((_, response) => response.socket?.destroy())
      assert.strictEqual((yield* client.send(target, exchange))._tag, "Lost")
      assert.strictEqual(seen.length, 1)
    }).pipe(Effect.scoped)
  )

  it.live("a listener that does not take the connection (a wrong secret, another process on that port): Unsent", () =>
    Effect.gen(function* () {
      let served = 0
      const listener = yield* Effect.acquireRelease(HopServer.listen("127.0.0.1", "the-owners-secret"), (made) =>
        Effect.sync(made.close)
      )
      const context = yield* Effect.context<never>()
      listener.serve({
        handler: () =>
          Effect.sync(() => {
            served++
            return HttpServerResponse.empty()
          }),
        runFork: Effect.runForkWith(context)
      })
      const client = yield* hop
      // The address of a runner that was replaced: its port now another runner's, whose secret differs.
      const stale = { origin: `tcp://127.0.0.1:${listener.port}`, secret: "a-former-runners-secret" }
      assert.strictEqual((yield* client.send(stale, exchange))._tag, "Unsent")
      // And a server of another kind on that port (here an HTTP one, which answers the bytes with an error).
      const http = yield* Effect.acquireRelease(
        Effect.callback<Server>((resume) => {
          const server = createServer((_, response) => response.end())
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.sync(() => server.close())
      )
      const port = (http.address() as AddressInfo).port
      assert.strictEqual(
        (yield* client.send({ origin: `tcp://127.0.0.1:${port}`, secret: "x" }, exchange))._tag,
        "Unsent"
      )
      assert.strictEqual(served, 0)
    }).pipe(Effect.scoped)
  )

  it.live("an owner whose machine drops SYNs (a partition): Unsent once the connect timeout passes", () =>
    Effect.gen(function* () {
      const target = yield* unanswering
      const client = yield* hopWith(300)
      const started = Date.now()
      // Without the connect timeout the OS would retry the SYN for about two minutes.
      const result = yield* client.send(target, exchange).pipe(Effect.timeout("5 seconds"))
      const waited = Date.now() - started
      assert.strictEqual(result._tag, "Unsent")
      // It waited for the handshake (nothing refused the connection outright) and then gave up.
      assert.isAtLeast(waited, 290)
      assert.isBelow(waited, 3_000)
      // The exchange that follows is not held either: no half-made connection was pooled.
      assert.strictEqual((yield* client.send(target, exchange).pipe(Effect.timeout("5 seconds")))._tag, "Unsent")
    }).pipe(Effect.scoped)
  )

  it.live(
    "a connect made while the process was busy past the connect timeout is kept: the timeout is not a stall",
    () =>
      Effect.gen(function* () {
        const { target, seen } = yield* answering
        const client = yield* hopWith(20)
        // Sent from the check phase, then the process is kept busy past the timeout: when it comes back, its
        // timers run before it reads the connect the kernel completed meanwhile (loopback needs no SYN retry).
        const result = yield* Effect.callback<DirectHop.Result>((resume) => {
          setImmediate(() => {
            client.exchange(target, "POST", exchange.url, exchange.headers, exchange.body, (settled) =>
              resume(Effect.succeed(settled))
            )
            const busyUntil = Date.now() + 100
            while (Date.now() < busyUntil) {
              // the stall under test
            }
          })
        })
        assert.strictEqual(result._tag, "Reply")
        assert.strictEqual(seen.length, 1)
      }).pipe(Effect.scoped)
  )

  it.live("an owner that answers is not held to the connect timeout: only the handshake is", () =>
    Effect.gen(function* () {
      // The reply comes after longer than the connect timeout, on a new and then on a pooled connection.
      const { target, seen } = yield* owner((_, response) => {
        // Real time on purpose: the subject is the hop's real connect timeout (250 ms), which a slow reply outlasts.
        setTimeout(() => {
          response.writeHead(200, { "content-type": "application/json" })
          response.end('{"jsonrpc":"2.0","id":1,"result":{}}')
        }, 500)
      })
      const client = yield* hopWith(250)
      for (let i = 0; i < 2; i++) {
        const result = yield* client.send(target, exchange)
        assert.strictEqual(result._tag, "Reply")
      }
      assert.strictEqual(seen.length, 2)
    }).pipe(Effect.scoped)
  )
})
