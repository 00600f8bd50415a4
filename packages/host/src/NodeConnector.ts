/**
 * The host's connector on Node: stdio servers are spawned as child processes
 * (their stderr kept for failure reports, or forwarded), remote servers are
 * reached over Streamable HTTP (falling back to legacy SSE) or legacy SSE
 * alone when the entry says `"type": "sse"`.
 */
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import type * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Connector from "./Connector.ts"
import * as McpConfig from "./McpConfig.ts"

/** Settings of the Node connector. */
export interface Options {
  /**
   * What happens to a stdio server's stderr (see `StdioTransport.StderrMode`),
   * chosen per server name. Default `"capture"`: only the tail is kept, for
   * the failure reports.
   */
  readonly stderr?: ((name: string) => StdioTransport.StderrMode) | undefined
  /** How a stdio server is shut down (close stdin, SIGTERM, SIGKILL). */
  readonly shutdown?: StdioTransport.ShutdownOptions | undefined
  /**
   * How long closing a Streamable HTTP server's connection waits for its
   * DELETE to be answered (see `StreamableHttpClient.Options`). Default 5 seconds.
   */
  readonly terminateTimeout?: Duration.Input | undefined
}

/** Connects as the entry says; see the module description. */
export const connect =
  (options: Options = {}): Connector.Connect =>
  (name, server) => {
    if (McpConfig.isStdio(server)) {
      return Effect.map(
        NodeStdio.makeClient({
          command: server.command,
          args: server.args,
          env: server.env,
          cwd: server.cwd,
          stderr: options.stderr?.(name) ?? "capture",
          shutdown: options.shutdown
        }),
        (client) => ({ transport: client, pid: client.pid })
      )
    }
    const transport: Layer.Layer<Transport.Transport, Transport.TransportError> =
      server.type === "sse"
        ? NodeHttpClient.layerSse({ url: server.url, headers: server.headers })
        : NodeHttpClient.layerStreamableHttp({
            url: server.url,
            headers: server.headers,
            terminateTimeout: options.terminateTimeout
          })
    return Effect.map(Layer.build(transport), (context) => ({
      transport: Context.get(context, Transport.Transport)
    }))
  }

/**
 * The Node connector as a Layer for `McpHost.layer`.
 *
 * @example
 * ```ts
 * import * as McpHost from "@effect-mcp/host/McpHost"
 * import * as NodeConnector from "@effect-mcp/host/NodeConnector"
 * import * as Layer from "effect/Layer"
 *
 * export const Host = McpHost.layer({
 *   clientInfo: { name: "my-host", version: "1.0.0" },
 *   config: { mcpServers: { everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] } } }
 * }).pipe(Layer.provide(NodeConnector.layer()))
 * ```
 */
export const layer = (options: Options = {}): Layer.Layer<Connector.Connector> => Connector.layer(connect(options))
