/**
 * The Node relay of a clustered server (packages/cluster internal/nodeRelay.ts)
 * between real sockets on loopback: a client's POST on a session another
 * runner owns goes to the owner's endpoint through the direct hop and its
 * whole reply comes back without effect's HTTP server; what the relay does not
 * take reaches the app untouched; and what it took but cannot answer whole (a
 * refusal, a streamed reply, an owner gone) reaches the app with the hop's
 * result and the body it read, so that the hop is never sent twice.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http"
import { type AddressInfo, connect } from "node:net"
import * as DirectHop from "../../packages/cluster/src/DirectHop.ts"
import * as NodeHop from "../../packages/cluster/src/internal/nodeHop.ts"
import * as NodeRelay from "../../packages/cluster/src/internal/nodeRelay.ts"
import { owner, type Seen } from "./hopOwner.ts"

const BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}'
const LIMIT = 1024

interface Receiver {
  readonly url: string
  /** Requests the app got, with the relay's attempt when there was one. */
  readonly app: Array<{ readonly url: string | undefined; readonly attempt: DirectHop.Attempt | undefined }>
  readonly direct: { count: number }
}

/**
 * A receiving process: the relay's filter in front of an app that answers
 * 299 (so a test sees which one answered), the owner reached at `target`.
 */
const receiver = (target: DirectHop.Target | undefined) =>
  Effect.acquireRelease(
    Effect.callback<Receiver & { readonly close: () => void }>((resume) => {
      const hop = NodeHop.make({ origin: "http://127.0.0.1:1", secret: "mine" })
      const relay = NodeRelay.make(hop, { path: "/mcp", maxBodyBytes: LIMIT })
      const app: Receiver["app"] = []
      const direct = { count: 0 }
      const route: NodeRelay.Route = {
        directRoute: (sessionId) => (sessionId === "remote" ? target : undefined),
        countForwarded: () => direct.count++
      }
      const serveApp = (request: IncomingMessage, response: ServerResponse) => {
        // The relay keys its attempt by Node's request, which effect's request carries as `source`.
        const attempt = relay.attemptOf({ source: request } as never)
        app.push({ url: request.url, attempt })
        // An attempt's body was read by the relay: the request has ended already.
        if (attempt !== undefined) return response.writeHead(299).end()
        request.resume()
        request.on("end", () => response.writeHead(299).end())
      }
      const filter = relay.filter(route)
      const server = createServer((request, response) => {
        if (!filter(request, response, serveApp)) serveApp(request, response)
      })
      server.listen(0, "127.0.0.1", () => {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(
          Effect.succeed({
            url,
            app,
            direct,
            close: () => {
              hop.close()
              server.closeAllConnections()
              server.close()
            }
          })
        )
      })
    }),
    (made) => Effect.sync(made.close)
  )

interface Answer {
  readonly status: number
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

/** One request from a client; `body` undefined sends none, `chunked` sends it without a length. */
const send = (
  url: string,
  options: {
    readonly method?: string
    readonly path?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    readonly chunked?: boolean
  }
) =>
  Effect.callback<Answer>((resume) => {
    const target = new URL(url)
    const outgoing = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        path: options.path ?? "/mcp",
        method: options.method ?? "POST",
        headers: { "content-type": "application/json", ...options.headers }
      },
      (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (body += chunk))
        response.on("end", () =>
          resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body }))
        )
      }
    )
    outgoing.on("error", (error) => resume(Effect.die(error)))
    if (options.chunked === true) {
      outgoing.write(options.body ?? "")
      outgoing.end()
    } else if (options.body !== undefined) {
      outgoing.setHeader("content-length", Buffer.byteLength(options.body))
      outgoing.end(options.body)
    } else outgoing.end()
    return Effect.sync(() => outgoing.destroy())
  })

const onSession = (id: string) => ({ "mcp-session-id": id, authorization: "Bearer t", host: "mcp.example.com" })

describe("the Node relay of a clustered server", () => {
  it.live("relays a POST on a session another runner owns and writes the owner's whole reply itself", () =>
    Effect.gen(function* () {
      const remote = yield* owner((_, response) => {
        response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "remote", "x-owner": "1" })
        response.end('{"jsonrpc":"2.0","id":1,"result":{}}')
      })
      const { url, app, direct } = yield* receiver(remote.target)
      const answer = yield* send(url, {
        path: "/mcp?q=1",
        // A client's private headers are not passed on: only a receiving process may set them.
        headers: { ...onSession("remote"), "x-effect-mcp-cluster-session": "forged" },
        body: BODY
      })
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.body, '{"jsonrpc":"2.0","id":1,"result":{}}')
      assert.strictEqual(answer.headers["content-type"], "application/json")
      assert.strictEqual(answer.headers["x-owner"], "1")
      assert.strictEqual(answer.headers["content-length"], String(answer.body.length))
      assert.strictEqual(app.length, 0)
      assert.strictEqual(direct.count, 1)
      const seen: Seen = remote.seen[0]!
      assert.strictEqual(seen.url, "/mcp?q=1")
      assert.strictEqual(seen.body, BODY)
      assert.strictEqual(seen.headers.authorization, "Bearer t")
      assert.strictEqual(seen.headers.host, "mcp.example.com")
      assert.strictEqual(seen.headers["mcp-session-id"], "remote")
      // The secret opened the connection; nothing of the cluster's own is added to the request: a hop is
      // served whenever it was sent (it is never delivered twice).
      assert.deepStrictEqual(remote.hellos, [remote.target.secret])
      assert.deepStrictEqual(
        Object.keys(seen.headers).filter((name) => name.startsWith("x-effect-mcp-cluster-")),
        []
      )
    }).pipe(Effect.scoped)
  )

  it.live("leaves to the app what it does not take, untouched and without an attempt", () =>
    Effect.gen(function* () {
      const remote = yield* owner((_, response) => response.writeHead(500).end())
      const { url, app, direct } = yield* receiver(remote.target)
      const cases = [
        { label: "a session owned here", headers: onSession("local"), body: BODY },
        { label: "no session", headers: {}, body: BODY },
        { label: "a GET", method: "GET", headers: onSession("remote") },
        { label: "a DELETE", method: "DELETE", headers: onSession("remote") },
        { label: "another path", path: "/other", headers: onSession("remote"), body: BODY },
        {
          label: "a hop from another runner",
          headers: { ...onSession("remote"), [DirectHop.HEADER_SECRET]: "x" },
          body: BODY
        },
        { label: "a chunked body", headers: onSession("remote"), body: BODY, chunked: true },
        { label: "a body above the limit", headers: onSession("remote"), body: "x".repeat(LIMIT + 1) }
      ]
      for (const one of cases) {
        const answer = yield* send(url, one)
        assert.strictEqual(answer.status, 299, one.label)
        assert.isUndefined(app.at(-1)?.attempt, one.label)
      }
      assert.strictEqual(app.length, cases.length)
      assert.strictEqual(remote.seen.length, 0)
      assert.strictEqual(direct.count, 0)
    }).pipe(Effect.scoped)
  )

  it.live(
    "relays a request whose headers the hop must not carry (a client's `Trailer`): the process keeps serving",
    () =>
      Effect.gen(function* () {
        const remote = yield* owner((_, response) => {
          response.writeHead(200, { "content-type": "application/json" })
          response.end('{"jsonrpc":"2.0","id":1,"result":{}}')
        })
        const { url, direct } = yield* receiver(remote.target)
        // Written by hand: Node's own client will not send `Trailer` with a length, a client on the wire may.
        const head = yield* Effect.callback<string>((resume) => {
          const socket = connect(Number(new URL(url).port), "127.0.0.1", () => {
            socket.write(
              "POST /mcp HTTP/1.1\r\nHost: mcp.example.com\r\nMcp-Session-Id: remote\r\n" +
                `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n` +
                `Trailer: x-checksum\r\nExpect: 100-continue\r\n\r\n${BODY}`
            )
          })
          let text = ""
          socket.setEncoding("utf8")
          socket.on("data", (chunk: string) => {
            text += chunk
            if (text.includes("\r\n\r\n") && !text.startsWith("HTTP/1.1 100")) resume(Effect.succeed(text))
            if (text.startsWith("HTTP/1.1 100") && text.split("\r\n\r\n").length > 2) resume(Effect.succeed(text))
          })
          return Effect.sync(() => socket.destroy())
        })
        assert.include(head, "HTTP/1.1 200")
        assert.strictEqual(direct.count, 1)
        assert.isUndefined(remote.seen[0]!.headers.trailer)
        assert.isUndefined(remote.seen[0]!.headers.expect)
        // Still serving.
        assert.strictEqual((yield* send(url, { headers: onSession("remote"), body: BODY })).status, 200)
      }).pipe(Effect.scoped)
  )

  it.live("hands a refused hop to the app with its result and body, the hop sent once", () =>
    Effect.gen(function* () {
      const remote = yield* owner((_, response) => {
        response.writeHead(421, { [DirectHop.HEADER_REFUSED]: "not-owner" }).end()
      })
      const { url, app, direct } = yield* receiver(remote.target)
      const answer = yield* send(url, { headers: onSession("remote"), body: BODY })
      assert.strictEqual(answer.status, 299)
      assert.strictEqual(remote.seen.length, 1)
      assert.strictEqual(direct.count, 0)
      const attempt = app[0]?.attempt
      assert.deepStrictEqual(attempt?.result, { _tag: "Refused" })
      assert.strictEqual(attempt?.body, BODY)
      assert.strictEqual(attempt?.target, remote.target)
    }).pipe(Effect.scoped)
  )

  it.live("hands a streamed reply to the app, its stream still to be read", () =>
    Effect.gen(function* () {
      const remote = yield* owner((_, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end("event: message\ndata: {}\n\n")
      })
      const { url, app } = yield* receiver(remote.target)
      yield* send(url, { headers: onSession("remote"), body: BODY })
      const result = app[0]?.attempt?.result
      assert.strictEqual(result?._tag, "Reply")
      if (result?._tag !== "Reply") return
      assert.strictEqual(result.contentType, "text/event-stream")
      assert.isDefined(result.stream)
    }).pipe(Effect.scoped)
  )

  it.live("hands an owner that cannot be reached to the app as Unsent", () =>
    Effect.gen(function* () {
      // A port nothing listens on: the one of a server closed at once.
      const gone = yield* owner((_, response) => response.end())
      const target = gone.target
      yield* Effect.callback<void>((resume) => {
        gone.server.close(() => resume(Effect.void))
      })
      const { url, app } = yield* receiver(target)
      const answer = yield* send(url, { headers: onSession("remote"), body: BODY })
      assert.strictEqual(answer.status, 299)
      assert.deepStrictEqual(app[0]?.attempt?.result, { _tag: "Unsent" })
    }).pipe(Effect.scoped)
  )

  it.live("a client gone before the owner answered abandons the hop", () =>
    Effect.gen(function* () {
      let ownerClosed!: () => void
      const closed = new Promise<void>((done) => (ownerClosed = done))
      let ownerReached!: () => void
      const reached = new Promise<void>((done) => (ownerReached = done))
      const remote = yield* owner((_, response) => {
        // Never answers: the relay's request to it is what the client's departure must end.
        response.on("close", ownerClosed)
        ownerReached()
      })
      const { url, app } = yield* receiver(remote.target)
      const client = yield* Effect.forkChild(send(url, { headers: onSession("remote"), body: BODY }))
      yield* Effect.promise(() => reached)
      assert.strictEqual(remote.seen.length, 1)
      yield* Fiber.interrupt(client)
      yield* Effect.promise(() => closed)
      assert.strictEqual(app.length, 0)
    }).pipe(Effect.scoped)
  )
})
