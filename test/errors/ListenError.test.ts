/**
 * A server that cannot listen says where and why: the address it asked for
 * and the OS error, not an empty `ServeError`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as StreamableHttpServer from "@effect-mcp/http/StreamableHttpServer"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as net from "node:net"

/** A plain TCP server holding a port on 127.0.0.1 for the test's scope. */
const holdPort = Effect.acquireRelease(
  Effect.callback<net.Server>((resume) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
)

describe("listen errors", () => {
  it.live(
    "a port in use: the address and the OS error in the message",
    () =>
      Effect.gen(function* () {
        const blocker = yield* holdPort
        const port = (blocker.address() as net.AddressInfo).port
        const error = yield* Layer.build(
          NodeHttpServer.layer(StreamableHttpServer.layer({ session: McpServer.makeSession }), { port })
        ).pipe(Effect.provide(McpServer.layer({ name: "listen", version: "1.0.0" })), Effect.flip)
        assert.strictEqual(error._tag, "ServeError")
        assert.instanceOf(error, NodeHttpServer.ListenError)
        const listen = error as NodeHttpServer.ListenError
        assert.strictEqual(listen.message, `cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)`)
        assert.strictEqual(listen.code, "EADDRINUSE")
        assert.strictEqual(listen.address, `127.0.0.1:${port}`)
      }).pipe(Effect.scoped),
    30_000
  )

  it.effect("an OS error in another shape is kept whole; IPv6 hosts are bracketed", () =>
    Effect.sync(() => {
      const cause = Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.invalid"), { code: "ENOTFOUND" })
      const notFound = new NodeHttpServer.ListenError({ host: "nowhere.invalid", port: 80, cause })
      assert.strictEqual(notFound.message, "cannot listen on nowhere.invalid:80: getaddrinfo ENOTFOUND nowhere.invalid")
      const denied = Object.assign(new Error("listen EACCES: permission denied ::1:80"), { code: "EACCES" })
      assert.strictEqual(
        new NodeHttpServer.ListenError({ host: "::1", port: 80, cause: denied }).message,
        "cannot listen on [::1]:80: permission denied (EACCES)"
      )
    })
  )
})
