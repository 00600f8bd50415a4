/**
 * The HTTP transport of a URL target, logging in when the server asks: every
 * request carries the stored token for its server, a 401 starts a login (the
 * authorization URL printed on stderr, the browser's redirect received on
 * 127.0.0.1), and the tokens are kept in a file between runs, so the next
 * run needs no login until the refresh token ends. `--no-login` turns it off:
 * a protected server then refuses the connection.
 */
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as FileTokenStore from "@effect-mcp/auth/FileTokenStore"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import type { AuthorizationFailed } from "@effect-mcp/auth/OAuthClientError"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as SseClient from "@effect-mcp/http/SseClient"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import * as NodeLoopbackUserAgent from "@effect-mcp/platform-node/NodeLoopbackUserAgent"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as os from "node:os"
import * as path from "node:path"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/** Where the tokens are kept unless `--token-file` says: `$XDG_CONFIG_HOME/effect-mcp/tokens.json` (or `~/.config`). */
export const defaultTokenFile = (): string =>
  path.join(process.env.XDG_CONFIG_HOME ?? path.join(os.homedir(), ".config"), "effect-mcp", "tokens.json")

const loopback = new Set(["127.0.0.1", "localhost", "[::1]"])

/**
 * Opens the transport to a remote server for as long as the scope lasts,
 * logging in through OAuth with the tokens of `tokenFile`.
 */
export const connect = (
  server: McpConfig.RemoteServer,
  tokenFile: string,
  options: {
    /** How long closing waits for the server to answer the DELETE that ends the session. Default 5 seconds. */
    readonly terminateTimeout?: Duration.Input | undefined
    /** How long each request of the OAuth discovery may take. Default 10 seconds. */
    readonly discoveryTimeout?: Duration.Input | undefined
  } = {}
): Effect.Effect<Transport.TransportShape, Transport.TransportError | AuthorizationFailed, Scope.Scope> => {
  const url = new URL(server.url)
  // Plain http is followed only for a server on this machine (a local authorization server in development).
  const allowInsecureRequests = url.protocol === "http:" && loopback.has(url.hostname)
  const Auth = OAuthClient.layer({ allowInsecureRequests, timeout: options.discoveryTimeout }).pipe(
    Layer.provide([
      FileTokenStore.layer(tokenFile).pipe(Layer.provide(NodeFileSystem.layer)),
      ClientRegistration.layer({ metadata: { client_name: "effect-mcp" }, allowInsecureRequests }),
      NodeLoopbackUserAgent.layer()
    ])
  )
  const transportOptions = { url: server.url, headers: server.headers, terminateTimeout: options.terminateTimeout }
  const transport: Layer.Layer<Transport.Transport, Transport.TransportError | AuthorizationFailed> = (
    server.type === "sse" ? SseClient.layer(transportOptions) : StreamableHttpClient.layer(transportOptions)
  ).pipe(Layer.provide(OAuthHttpClient.layer({ serverUrl: server.url })), Layer.provide([NodeHttpClient.layer, Auth]))
  return Effect.map(Layer.build(transport), (context) => Context.get(context, Transport.Transport))
}
