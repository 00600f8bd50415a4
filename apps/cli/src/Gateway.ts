/**
 * `effect-mcp gateway`: the servers of a config file behind one MCP server
 * (`@effect-mcp/gateway`), served over Streamable HTTP on 127.0.0.1 (legacy
 * SSE too with `--sse`), or over this process's stdio with `--stdio`. It runs
 * until Ctrl-C or SIGTERM, which close every session and stop every stdio
 * upstream. A config file that cannot be read or does not fit, or a port
 * that cannot be listened on, ends it with exit code 3.
 */
import packageJson from "@effect-mcp/cli/package.json" with { type: "json" }
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as GatewayConfig from "@effect-mcp/gateway/GatewayConfig"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ExitCode from "./ExitCode.ts"

const flags = {
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription("The mcpServers config file of the upstreams (and its optional `gateway` section)"),
    Flag.withDefault("mcp.json")
  ),
  port: Flag.Int("port").pipe(
    Flag.withDescription("The port to listen on (0 picks a free one); default 3000"),
    Flag.withDefault(3000)
  ),
  host: Flag.String("host").pipe(
    Flag.withDescription("The interface to listen on; default 127.0.0.1 (this machine only)"),
    Flag.withDefault("127.0.0.1")
  ),
  stdio: Flag.Boolean("stdio").pipe(
    Flag.withDescription("Serve one client over this process's stdin and stdout instead of HTTP"),
    Flag.withDefault(false)
  ),
  sse: Flag.Boolean("sse").pipe(
    Flag.withDescription("Serve the legacy HTTP+SSE endpoints (/sse, /messages) beside Streamable HTTP"),
    Flag.withDefault(false)
  ),
  unprefixed: Flag.String("unprefixed").pipe(
    Flag.withDescription("An upstream whose tools and prompts keep their own names (else server__name)"),
    Flag.optional
  ),
  serverStderr: Flag.Boolean("server-stderr").pipe(
    Flag.withDescription("Show the stdio upstreams' stderr as it comes (else kept for failure reports)"),
    Flag.withDefault(false)
  )
}

const badConfig = (error: McpConfig.ConfigError) =>
  new ExitCode.Exit({ code: ExitCode.Target, message: error.message, cause: error })

/** The `gateway` subcommand. */
export const command = Command.make("gateway", flags, (input) =>
  Effect.gen(function* () {
    const file = yield* GatewayConfig.load(input.config).pipe(Effect.mapError(badConfig))
    const unprefixed = Option.getOrUndefined(input.unprefixed) ?? file.unprefixed
    if (unprefixed !== undefined && file.config.mcpServers[unprefixed] === undefined) {
      return yield* new ExitCode.Exit({
        code: ExitCode.Usage,
        message: `--unprefixed names no server of ${input.config}: ${JSON.stringify(unprefixed)}`
      })
    }
    const server = Gateway.layer({
      server: { name: "effect-mcp-gateway", version: packageJson.version },
      config: file.config,
      naming: file.naming,
      unprefixed,
      credentials: file.credentials
    }).pipe(Layer.provide(NodeConnector.layer({ stderr: () => (input.serverStderr ? "inherit" : "capture") })))
    if (input.stdio) return yield* NodeMcpServer.serveStdio(server)
    return yield* Effect.gen(function* () {
      // The line a supervisor (or a test) waits for: the endpoint is served from now on.
      yield* Console.error(`effect-mcp gateway listening on ${yield* NodeMcpServer.url}/mcp`)
      return yield* Effect.never
    }).pipe(
      Effect.provide(NodeMcpServer.layerHttp(server, { host: input.host, port: input.port, legacySse: input.sse })),
      // The listener could not be opened (the port is taken, say): the target cannot be served.
      Effect.mapError(
        (error) =>
          new ExitCode.Exit({
            code: ExitCode.Target,
            message: `cannot listen on ${input.host}:${input.port}: ${error.message}`,
            cause: error
          })
      )
    )
  })
).pipe(
  Command.withDescription(
    "Serve the servers of an mcpServers config behind one MCP endpoint: one namespaced catalog, calls routed to " +
      "their server (Streamable HTTP on 127.0.0.1:3000 by default, or --stdio)"
  )
)
