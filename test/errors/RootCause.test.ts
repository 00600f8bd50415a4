/**
 * A connection that cannot be made says why in its one-line message, with
 * the system error code kept (`Transport.systemErrorCode` finds it): a port
 * nothing listens on is "connection refused (ECONNREFUSED)", a host name that
 * does not resolve "host not found", TLS spoken to a plain HTTP server a TLS
 * failure, a command that does not exist "not found (ENOENT)"; the host
 * reports the same in a server's status. Real sockets and processes.
 */
import * as http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

const clientInfo = { name: "root-cause", version: "1.0.0" }

/** The error a client's connect fails with over `transport`. */
const connectError = (transport: Layer.Layer<Transport.Transport, Transport.TransportError>) =>
  McpClient.make({ clientInfo, handshakeTimeout: 10_000 }).pipe(Effect.provide(transport), Effect.scoped, Effect.flip)

/** A plain HTTP server on 127.0.0.1:0 answering every request with `status` and `body`; its port. */
const answering = (status: number, body: string) =>
  Effect.acquireRelease(
    Effect.callback<http.Server>((resume) => {
      const server = http.createServer((_request, response) =>
        response.writeHead(status, { "content-type": "text/plain" }).end(body)
      )
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => (server.address() as { readonly port: number }).port))

/** A port nothing listens on: one a server had, closed again. */
const closedPort = Effect.scoped(answering(404, ""))

describe("errors keep their root cause", () => {
  it.live("Streamable HTTP to a port nothing listens on: connection refused (ECONNREFUSED)", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const url = `http://127.0.0.1:${port}/mcp`
      const error = yield* connectError(NodeHttpClient.layerStreamableHttp({ url }))
      assert.strictEqual(error.message, `initialization failed: POST ${url} failed: connection refused (ECONNREFUSED)`)
      assert.strictEqual(Transport.systemErrorCode(error), "ECONNREFUSED")
    })
  )

  it.live("a URL that is no MCP endpoint: both the POST's refusal and the legacy fallback's are said", () =>
    Effect.gen(function* () {
      const port = yield* answering(404, "Not Found")
      const url = `http://127.0.0.1:${port}/mcp`
      const error = yield* connectError(NodeHttpClient.layerStreamableHttp({ url }))
      // Before, only the GET's: "initialization failed: GET <url> did not open an event stream (HTTP 404)".
      assert.strictEqual(
        error.message,
        `initialization failed: POST ${url} was refused (HTTP 404), and so was the legacy HTTP+SSE transport: ` +
          `GET ${url} did not open an event stream (HTTP 404)`
      )
    }).pipe(Effect.scoped)
  )

  it.live("a proxy's error page: the status and the start of what it said", () =>
    Effect.gen(function* () {
      const port = yield* answering(502, "Bad Gateway: upstream connect error")
      const url = `http://127.0.0.1:${port}/mcp`
      const error = yield* connectError(NodeHttpClient.layerStreamableHttp({ url }))
      // Before: "the server refused the message (HTTP 502)".
      assert.strictEqual(
        error.message,
        'initialization failed: the server refused the message (HTTP 502): "Bad Gateway: upstream connect error"'
      )
    }).pipe(Effect.scoped)
  )

  it.live("legacy SSE to a port nothing listens on: the GET says connection refused", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const url = `http://127.0.0.1:${port}/sse`
      const error = yield* connectError(NodeHttpClient.layerSse({ url }))
      assert.strictEqual(error.message, `GET ${url} failed: connection refused (ECONNREFUSED)`)
      assert.strictEqual(Transport.systemErrorCode(error), "ECONNREFUSED")
    })
  )

  it.live("a host name that does not resolve: host not found, or the lookup failed (offline)", () =>
    Effect.gen(function* () {
      // `.invalid` never resolves (RFC 2606); without a network the lookup fails with EAI_AGAIN instead.
      const url = "http://no-such-host.invalid/mcp"
      const error = yield* connectError(NodeHttpClient.layerStreamableHttp({ url }))
      assert.match(error.message, /failed: (host not found \(ENOTFOUND\)|host name lookup failed .*\(EAI_AGAIN\))$/)
    })
  )

  it.live("TLS spoken to a plain HTTP server: the TLS handshake failed, with the code", () =>
    Effect.gen(function* () {
      const port = yield* answering(404, "")
      const url = `https://127.0.0.1:${port}/mcp`
      const error = yield* connectError(NodeHttpClient.layerStreamableHttp({ url }))
      assert.strictEqual(
        error.message,
        `initialization failed: POST ${url} failed: TLS handshake failed (is it an http:// server?) (EPROTO)`
      )
      assert.strictEqual(Transport.systemErrorCode(error), "EPROTO")
    }).pipe(Effect.scoped)
  )

  it.live("a command that does not exist: not found (ENOENT), for the client and in the host's status", () =>
    Effect.gen(function* () {
      const error = yield* connectError(NodeStdio.layerClient({ command: "no-such-mcp-server-command" }))
      assert.strictEqual(
        error.message,
        "failed to start the server process `no-such-mcp-server-command`: not found (ENOENT)"
      )
      assert.strictEqual(Transport.systemErrorCode(error), "ENOENT")

      const host = yield* McpHost.make({
        clientInfo,
        config: { mcpServers: { missing: { command: "no-such-mcp-server-command", cwd: "/" } } },
        reconnect: Schedule.recurs(0)
      }).pipe(Effect.provide(NodeConnector.layer()))
      const failed = yield* host.statusChanges.pipe(
        Stream.filter((c) => c.status._tag === "Failed"),
        Stream.runHead
      )
      assert.strictEqual(
        failed._tag === "Some" && failed.value.status._tag === "Failed" ? failed.value.status.failure.message : "",
        'failed to start the server process `no-such-mcp-server-command`: not found, or its working directory "/" does not exist (ENOENT)'
      )
    }).pipe(Effect.scoped)
  )
})
