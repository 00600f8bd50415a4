/**
 * `mcp-everything-server`: serves the everything server over stdio or HTTP.
 *
 *   mcp-everything-server --stdio
 *   mcp-everything-server --http [--port <n>] [--host <h>] [--stateless] [--json] [limits, names]
 *       [--auth --auth-issuer <url> [--auth-audience <url>] [--auth-scopes <a,b>] [--auth-tool-scope <t>=<s>]...]
 *       [--event-store <sqlite:file|postgres://...>] [--request-state-key <key>]...
 *       [--task-store <sqlite:file|postgres://...> [--task-heartbeat <ms>]]
 *   mcp-everything-server --help
 *
 * Over HTTP, Streamable HTTP is at `/mcp` and the legacy HTTP+SSE transport
 * at `/sse` (messages to `/messages`). `--port 0` picks a free port; the URL
 * is printed on stderr either way (`listening on <url>`). `NodeMcpServer`
 * loads the HTTP stack only for `--http`: a stdio start (most starts, each a
 * fresh process) skips it; likewise `@effect-mcp/auth` is loaded for `--auth` only.
 * The standard OpenTelemetry variables (`OTEL_EXPORTER_OTLP_ENDPOINT`...)
 * export traces, metrics and logs over OTLP (`NodeTelemetry`); without an
 * endpoint the exporters are not loaded.
 */
import type * as EventStore from "@effect-mcp/http/EventStore"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as TaskStore from "@effect-mcp/server/TaskStore"
import * as NodeTelemetry from "@effect-mcp/platform-node/NodeTelemetry"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as Cli from "./Cli.ts"
import * as EverythingServer from "./EverythingServer.ts"

const seconds = (value: number | undefined) => (value === undefined ? undefined : Duration.seconds(value))

const http = (cli: Cli.Http) =>
  Effect.gen(function* () {
    const auth =
      cli.auth === undefined
        ? undefined
        : (yield* Effect.promise(() => import("./internal/auth.ts"))).protection(cli.auth)
    // Loaded for --cluster only: a single-process server never loads effect/cluster or SQL.
    if (cli.cluster !== undefined)
      return yield* (yield* Effect.promise(() => import("./internal/cluster.ts"))).serve(cli, auth)
    const durable = yield* Effect.promise(() => import("./internal/durable.ts"))
    const settings = yield* Effect.result(
      Effect.all({
        requestStateKeys: durable.requestStateKeys(cli),
        eventStore: cli.eventStore === undefined ? Effect.undefined : durable.eventStore(cli.eventStore)
      })
    )
    if (settings._tag === "Failure") {
      process.stderr.write(`mcp-everything-server: ${settings.failure.message}\n`)
      process.exitCode = 2
      return
    }
    const taskStore = yield* Effect.result(
      cli.taskStore === undefined
        ? Effect.undefined
        : Effect.flatMap(
            Effect.promise(() => import("./internal/taskStore.ts")),
            (tasks) => tasks.open(cli.taskStore!)
          )
    )
    if (taskStore._tag === "Failure") {
      process.stderr.write(`mcp-everything-server: ${taskStore.failure.message}\n`)
      process.exitCode = 2
      return
    }
    return yield* serve(cli, auth, { ...settings.success, taskStore: taskStore.success })
  }).pipe(Effect.scoped)

/** Serves over stdio, with the request-state keys of the command line or the environment when given. */
const stdio = (cli: Cli.Stdio) =>
  Effect.gen(function* () {
    // Neither given: the settings module is not even loaded (a stdio server's start is on its client's path).
    if (cli.requestStateKeys === undefined && process.env.MCP_REQUEST_STATE_KEYS === undefined) {
      return yield* NodeMcpServer.serveStdio(EverythingServer.layer())
    }
    const durable = yield* Effect.promise(() => import("./internal/durable.ts"))
    const keys = yield* Effect.result(durable.requestStateKeys(cli))
    if (keys._tag === "Failure") {
      process.stderr.write(`mcp-everything-server: ${keys.failure.message}\n`)
      process.exitCode = 2
      return
    }
    return yield* NodeMcpServer.serveStdio(EverythingServer.layer({ requestStateKeys: keys.success }))
  })

/** What lets processes share clients (internal/durable.ts): the event store and the request-state keys. */
interface Durable {
  readonly requestStateKeys: ReadonlyArray<Redacted.Redacted<string>> | undefined
  readonly eventStore: EventStore.EventStoreShape | undefined
  /** `--task-store` (internal/taskStore.ts): where the server keeps its tasks. */
  readonly taskStore?: TaskStore.TaskStoreShape | undefined
}

/** The server, with its tasks in the `--task-store` database when given. */
const server = (cli: Cli.Http, durable: Durable | undefined) => {
  const base = EverythingServer.layer({
    requestStateKeys: durable?.requestStateKeys,
    ...(cli.taskHeartbeatMs === undefined ? {} : { tasks: { heartbeatMs: cli.taskHeartbeatMs } })
  })
  const store = durable?.taskStore
  return store === undefined ? base : Layer.provide(base, Layer.succeed(TaskStore.TaskStore, store))
}

const serve = (cli: Cli.Http, auth: NodeMcpServer.HttpOptions["auth"], durable?: Durable) =>
  Effect.gen(function* () {
    const base = yield* NodeMcpServer.url
    const protectedBy = cli.auth === undefined ? "" : `, tokens from ${cli.auth.issuer}`
    yield* Console.error(`mcp-everything-server listening on ${base}/mcp (legacy SSE: ${base}/sse${protectedBy})`)
    return yield* Effect.never
  }).pipe(
    Effect.provide(
      NodeMcpServer.layerHttp(server(cli, durable), {
        auth,
        eventStore: durable?.eventStore,
        host: cli.host,
        port: cli.port,
        stateless: cli.stateless,
        responseMode: cli.json ? "json" : "sse",
        legacySse: true,
        allowedHosts: cli.allowedHosts,
        allowedOrigins: cli.allowedOrigins,
        dnsRebindingProtection: cli.dnsRebindingProtection,
        maxSessions: cli.maxSessions,
        maxSessionsPerClient: cli.maxSessionsPerClient,
        sessionIdleTimeout: seconds(cli.sessionIdleTimeoutSeconds),
        writeTimeout: seconds(cli.writeTimeoutSeconds),
        keepaliveInterval: seconds(cli.keepaliveSeconds)
      })
    )
  )

const cli = Cli.parse(process.argv.slice(2))
if (typeof cli === "string") {
  process.stderr.write(`mcp-everything-server: ${cli}\n${Cli.usage}\n`)
  process.exitCode = 2
} else if (cli.mode === "help") {
  process.stdout.write(`${Cli.usage}\n`)
} else {
  const telemetry = NodeTelemetry.layer({
    serviceName: "mcp-everything-server",
    serviceVersion: EverythingServer.version
  })
  const program = cli.mode === "stdio" ? stdio(cli) : http(cli)
  NodeRuntime.runMain(Effect.provide(program, telemetry))
}
