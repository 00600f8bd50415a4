/**
 * `effect-mcp gateway`: the servers of a config file behind one MCP server
 * (`@effect-mcp/gateway`), served over Streamable HTTP on 127.0.0.1 (legacy
 * SSE too with `--sse`), or over this process's stdio with `--stdio`. It runs
 * until Ctrl-C or SIGTERM, which close every session and stop every stdio
 * upstream. A config file that cannot be read or does not fit, or a port
 * that cannot be listened on, ends it with exit code 3.
 *
 * Scaling: replicas given the same request-state keys (`--request-state-key`
 * or MCP_REQUEST_STATE_KEYS) serve each other's 2026-07-28 multi-round-trip
 * retries behind any load balancer; `--cluster` makes the process a runner of
 * an effect/cluster (internal/cluster.ts, loaded for it only), so stateful
 * 2025 sessions are served whichever runner a request reaches.
 */
import packageJson from "@effect-mcp/cli/package.json" with { type: "json" }
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as GatewayConfig from "@effect-mcp/gateway/GatewayConfig"
import type * as McpConfig from "@effect-mcp/host/McpConfig"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as RequestStateKeys from "@effect-mcp/server/RequestStateKeys"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ExitCode from "./ExitCode.ts"
import * as Upstreams from "./internal/upstreams.ts"

const flags = {
  config: Flag.String("config").pipe(
    Flag.withAlias("c"),
    Flag.withDescription("The mcpServers config file of the upstreams (and its optional `gateway` section)"),
    Flag.withDefault("mcp.json")
  ),
  // Checked here: Node throws on a port out of range, which would be a defect with no message.
  port: Flag.Int("port").pipe(
    Flag.filter(
      (port) => port >= 0 && port <= 65535,
      () => "a port from 0 to 65535 (0 picks a free one)"
    ),
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
  ),
  requestStateKey: Flag.Redacted("request-state-key").pipe(
    Flag.withDescription(
      "A key of 2026-07-28 requestState (repeatable or comma-separated, the first signing, 32 bytes or more; else " +
        "MCP_REQUEST_STATE_KEYS): replicas with the same keys serve each other's multi-round-trip retries"
    ),
    Flag.atLeast(0)
  ),
  cluster: Flag.String("cluster").pipe(
    Flag.withDescription(
      "Run as a runner of a cluster whose state is in this database (sqlite:<file> or postgres://...): 2025 " +
        "sessions are served by any runner; needs --runner-port"
    ),
    Flag.optional
  ),
  runnerPort: Flag.Int("runner-port").pipe(
    Flag.withDescription("With --cluster: the port the other runners reach this one at (its identity)"),
    Flag.optional
  ),
  runnerHost: Flag.String("runner-host").pipe(
    Flag.withDescription("With --cluster: the host the other runners reach this one at; default 127.0.0.1"),
    Flag.optional
  )
}

const badConfig = (error: McpConfig.ConfigError) =>
  new ExitCode.Exit({ code: ExitCode.Target, message: error.message, cause: error })

const usage = (message: string) => new ExitCode.Exit({ code: ExitCode.Usage, message })

/**
 * The request-state keys of the command line, else of MCP_REQUEST_STATE_KEYS, checked; undefined when neither
 * gives any (each process then makes a random key of its own). A message never quotes a key: keys are secrets.
 */
const requestStateKeys = (given: ReadonlyArray<Redacted.Redacted<string>>) =>
  Effect.gen(function* () {
    const variable = RequestStateKeys.defaultVariable
    const keys =
      given.length > 0
        ? given.flatMap((key) => RequestStateKeys.parse(Redacted.value(key)))
        : Option.match(
            yield* Effect.mapError(Config.option(Config.Redacted(variable)), (error) =>
              usage(`${variable}: ${error.message}`)
            ),
            { onNone: () => undefined, onSome: (text) => RequestStateKeys.parse(Redacted.value(text)) }
          )
    if (keys === undefined) return undefined
    const checked = RequestStateKeys.toBytes(keys)
    if (checked instanceof RequestStateKeys.RequestStateKeyError) {
      return yield* usage(`${given.length > 0 ? "--request-state-key" : variable}: ${checked.message}`)
    }
    return keys
  })

/** The `--cluster` flags, checked: the runner's database and address, or undefined without `--cluster`. */
const clusterOf = (input: {
  readonly cluster: Option.Option<string>
  readonly runnerPort: Option.Option<number>
  readonly runnerHost: Option.Option<string>
  readonly stdio: boolean
  readonly sse: boolean
}) =>
  Effect.gen(function* () {
    if (Option.isNone(input.cluster)) {
      if (Option.isSome(input.runnerPort) || Option.isSome(input.runnerHost)) {
        return yield* usage("--runner-port and --runner-host need --cluster")
      }
      return undefined
    }
    const storage = input.cluster.value
    if (!/^(sqlite:.|postgres(ql)?:\/\/)/.test(storage)) {
      return yield* usage("--cluster needs a database URL (sqlite:<file> or postgres://...)")
    }
    if (input.stdio || input.sse) {
      return yield* usage("--cluster serves Streamable HTTP only: not with --stdio or --sse")
    }
    const runnerPort = Option.getOrUndefined(input.runnerPort)
    if (runnerPort === undefined || !Number.isInteger(runnerPort) || runnerPort < 1 || runnerPort > 65535) {
      return yield* usage("--cluster needs --runner-port <n> (1 to 65535)")
    }
    return { storage, runnerPort, runnerHost: Option.getOrElse(input.runnerHost, () => "127.0.0.1") }
  })

/** The `gateway` subcommand. */
export const command = Command.make("gateway", flags, (input) =>
  Effect.gen(function* () {
    const file = yield* GatewayConfig.load(input.config).pipe(Effect.mapError(badConfig))
    const unprefixed = Option.getOrUndefined(input.unprefixed) ?? file.unprefixed
    if (unprefixed !== undefined && file.config.mcpServers[unprefixed] === undefined) {
      return yield* usage(`--unprefixed names no server of ${input.config}: ${JSON.stringify(unprefixed)}`)
    }
    const cluster = yield* clusterOf(input)
    const keys = yield* requestStateKeys(input.requestStateKey)
    const server = Gateway.layer({
      server: { name: "effect-mcp-gateway", version: packageJson.version, requestStateKeys: keys },
      config: file.config,
      naming: file.naming,
      unprefixed,
      credentials: file.credentials,
      discovery: file.discovery,
      startTimeout: file.startTimeout,
      awaitUpstreams: file.awaitUpstreams,
      // Gateway.layer's default: each upstream is tried again for as long as the gateway runs.
      reconnectCap: file.reconnectCap
    }).pipe(
      Layer.provide(NodeConnector.layer({ stderr: () => (input.serverStderr ? "inherit" : "capture") })),
      (gateway) => Layer.provideMerge(Upstreams.layerReport, gateway)
    )
    if (input.stdio) return yield* NodeMcpServer.serveStdio(server)
    // Loaded for --cluster only: a single gateway never loads effect/cluster or SQL.
    const listener =
      cluster === undefined
        ? NodeMcpServer.layerHttp(server, { host: input.host, port: input.port, legacySse: input.sse })
        : (yield* Effect.promise(() => import("./internal/cluster.ts"))).layer(server, {
            ...cluster,
            host: input.host,
            port: input.port
          })
    return yield* Effect.gen(function* () {
      // The line a supervisor (or a test) waits for: the endpoint is served from now on.
      const runner = cluster === undefined ? "" : ` (cluster runner ${cluster.runnerHost}:${cluster.runnerPort})`
      yield* Console.error(`effect-mcp gateway listening on ${yield* NodeMcpServer.url}/mcp${runner}`)
      return yield* Effect.never
    }).pipe(
      Effect.provide(listener),
      // The listener could not be opened (the port is taken, say), or the cluster's database not reached.
      Effect.mapError((error) => {
        const message = error instanceof Error ? error.message : String(error)
        return new ExitCode.Exit({
          code: ExitCode.Target,
          message:
            cluster === undefined
              ? // A ListenError names the address itself.
                error instanceof NodeHttpServer.ListenError
                ? message
                : `cannot listen on ${input.host}:${input.port}: ${message}`
              : // Not the database URL: it may hold a password.
                `cannot serve as a cluster runner on ${input.host}:${input.port} (runner port ${cluster.runnerPort}): ${message}`,
          cause: error
        })
      })
    )
  })
).pipe(
  Command.withDescription(
    "Serve the servers of an mcpServers config behind one MCP endpoint: one namespaced catalog, calls routed to " +
      "their server (Streamable HTTP on 127.0.0.1:3000 by default, or --stdio); scale out with shared " +
      "--request-state-key (stateless 2026-07-28) or --cluster (2025 sessions)"
  )
)
