/**
 * McpHost when a Streamable HTTP server ends the session (DELETE from
 * outside, as an operator or another holder of the id could): the client
 * starts a new session by itself, and the host follows it instead of
 * counting a loss. The server stays Ready, nothing reconnects, and calls go
 * to the new session.
 */
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Connector from "@effect-mcp/host/Connector"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as ServerStatus from "@effect-mcp/host/ServerStatus"
import * as Stream from "effect/Stream"

const Echo = Tool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(`echo:${text}`)
})
const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "expiry", version: "1.0.0" })))

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const block = result.content[0] as { readonly type: string; readonly text?: string } | undefined
  return block?.type === "text" ? (block.text ?? "") : ""
}

describe("McpHost: a session the server ended", () => {
  it.live(
    "the client's new session is followed: still Ready, no reconnect, calls work",
    () =>
      Effect.gen(function* () {
        const listening = yield* Layer.build(NodeMcpServer.layerHttp(Server))
        const url = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(listening))}/mcp`
        // The Node connector's HTTP transport, keeping its HTTP view for the session id.
        let http: StreamableHttpClient.StreamableHttpClientShape | undefined
        let attempts = 0
        // The session id each time the client sends `notifications/initialized`: a session was negotiated.
        const negotiated = yield* Queue.unbounded<string | undefined>()
        const connector = Connector.layer((_name, server) =>
          Effect.gen(function* () {
            attempts++
            const context = yield* Layer.build(
              NodeHttpClient.layerStreamableHttp({ url: (server as McpConfig.RemoteServer).url })
            )
            const view = Context.get(context, StreamableHttpClient.StreamableHttpClient)
            http = view
            const transport = Context.get(context, Transport.Transport)
            // Only `send` is wrapped, so neither `trySend` is kept (it would bypass the wrapper) nor is
            // `incoming` changed (`attach` stays the transport's own).
            const send: Transport.TransportShape["send"] = (frame, options) =>
              Effect.tap(transport.send(frame, options), () =>
                (Array.isArray(frame) ? frame : [frame]).some(
                  (message: JsonRpc.Message) => "method" in message && message.method === "notifications/initialized"
                )
                  ? Queue.offer(negotiated, view.sessionId())
                  : Effect.void
              )
            return {
              transport: {
                incoming: transport.incoming,
                send,
                attach: transport.attach?.bind(transport),
                renew: transport.renew,
                sessionId: transport.sessionId
              }
            }
          })
        )
        const context = yield* Layer.build(
          McpHost.layer({
            clientInfo: { name: "host-test", version: "1.0.0" },
            config: { mcpServers: { expiry: { url } } },
            // Sessions exist up to 2025-11-25 (2026-07-28 is stateless).
            client: { supportedVersions: ["2025-11-25"] }
          }).pipe(Layer.provide(connector))
        )
        const host = Context.get(context, McpHost.McpHost)
        yield* host.awaitReady("expiry")
        assert.strictEqual(textOf(yield* host.callTool("expiry__echo", { text: "one" })), "echo:one")
        const seen: Array<ServerStatus.ServerStatus> = []
        yield* host.statusChanges.pipe(
          Stream.runForEach((c) => Effect.sync(() => seen.push(c.status))),
          Effect.forkScoped
        )
        const first = http!.sessionId()!
        const response = yield* Effect.flatMap(HttpClient.HttpClient, (client) =>
          client.execute(
            HttpClientRequest.delete(url).pipe(
              HttpClientRequest.setHeaders({
                "mcp-session-id": first,
                "mcp-protocol-version": http!.protocolVersion() ?? "2025-11-25"
              })
            )
          )
        ).pipe(Effect.provide(NodeHttpClient.layer), Effect.orDie)
        assert.strictEqual(response.status, 200)
        // The host notices when the client does: the session closes, a new one is negotiated.
        let renewed: string | undefined = first
        while (renewed === first) renewed = yield* Queue.take(negotiated)
        assert.isDefined(renewed)
        assert.strictEqual(http!.sessionId(), renewed)
        assert.strictEqual(textOf(yield* host.callTool("expiry__echo", { text: "two" })), "echo:two")
        // What is checked is that nothing happens (no loss counted, no reconnect): time for a wrong one to show.
        yield* Effect.sleep("200 millis")
        assert.deepStrictEqual(
          seen.map((s) => s._tag),
          ["Ready"]
        )
        assert.strictEqual(attempts, 1)
      }),
    30_000
  )
})
