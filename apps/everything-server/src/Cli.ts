/**
 * The command line of `mcp-everything-server`: which transport, and for HTTP
 * the address, session mode, response mode, the names accepted in
 * `Host`/`Origin`, and the limits that keep one client from taking the
 * server (sessions in all and per client, idle and write timeouts), and the
 * OAuth protection (`--auth`: tokens from one issuer, for one audience).
 */
export const usage = `usage: mcp-everything-server --stdio [--request-state-key <key>]...
       mcp-everything-server --http [--port <n>] [--host <host>] [--stateless] [--json]
           [--allowed-host <name>]... [--allowed-origin <origin>]... [--no-dns-rebinding-protection]
           [--max-sessions <n>] [--max-sessions-per-client <n>] [--session-idle-timeout <seconds>]
           [--write-timeout <seconds>] [--keepalive <seconds>]
           [--auth --auth-issuer <url> [--auth-audience <url>] [--auth-scopes <a,b>]
            [--auth-tool-scope <tool>=<scope>]...]
           [--cluster <sqlite:file|postgres://...> --runner-port <n> [--runner-host <host>]]
           [--event-store <sqlite:file|postgres://...>] [--request-state-key <key>]...
           [--task-store <sqlite:file|postgres://...> [--task-heartbeat <ms>]]
       mcp-everything-server --help

--auth makes the HTTP endpoints an OAuth 2.1 protected resource: every request needs a
JWT access token from --auth-issuer (its keys found through the issuer's metadata on first
use) whose audience is --auth-audience (default: the endpoint's URL, <base>/mcp); the
protected resource metadata is at /.well-known/oauth-protected-resource/mcp.
--auth-scopes lists the scopes advertised and asked for; --auth-tool-scope makes a tool
need a scope (403 insufficient_scope without it). With --cluster give every runner the same
--auth-audience (the URL clients use): a session stays bound to its principal on every runner.

--cluster makes the process a runner: sessions live in the cluster's database, and a request
reaching a runner that does not own its session is carried to the owner by the direct hop,
a connection to the owner's hop listener: a TCP port picked at start on the interface of
the endpoint, reached at its --host, or at its --runner-host when it listens on a wildcard
address (not the owner's HTTP endpoint). Runners must reach each other's hop listener and
--runner-port (effect/cluster's own traffic: who owns which session); keep both, and the
database, reachable by the runners only.

--event-store keeps the events of resumable SSE streams in a database (SQLite file, or
PostgreSQL) instead of memory, so processes sharing it replay each other's streams on
Last-Event-ID, until the session is deleted or expires (its events go with it).
--request-state-key (repeatable, or a comma-separated list; else the
MCP_REQUEST_STATE_KEYS variable) gives the keys of 2026-07-28 requestState, the first
signing and each accepted, at least 32 bytes each: processes given the same keys serve
each other's multi-round-trip retries (default: a random key per process), over HTTP or stdio (a
gateway's replicas, each with a stdio child of its own). Keys are never logged.

--task-store keeps tasks (records, results, worker heartbeats) in a database instead of
memory: a task's result survives a restart, and a task whose process died reads failed
once its worker misses three heartbeats (--task-heartbeat, default 5000 ms). With --cluster
tasks are kept in the cluster's database (--task-heartbeat applies; --task-store is refused).

Telemetry follows the standard OpenTelemetry variables: OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT) exports traces, metrics and logs over
OTLP/HTTP; OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf or
http/json), OTEL_SERVICE_NAME (default mcp-everything-server), OTEL_RESOURCE_ATTRIBUTES,
OTEL_{TRACES,METRICS,LOGS}_EXPORTER=none and OTEL_SDK_DISABLED=true are honoured.`

/** `--help`: print the usage and exit. */
export interface Help {
  readonly mode: "help"
}

/** The OAuth protection given on the command line (`--auth` and its flags). */
export interface Auth {
  /** The authorization server whose tokens are accepted (`--auth-issuer`). */
  readonly issuer: string
  /** The audience tokens must name (`--auth-audience`); the endpoint's URL when absent. */
  readonly audience?: string
  /** Scopes advertised in the metadata and asked for in challenges (`--auth-scopes`, comma-separated). */
  readonly scopes?: ReadonlyArray<string>
  /** Scopes each tool needs (`--auth-tool-scope tool=scope`, repeatable). */
  readonly toolScopes?: Readonly<Record<string, ReadonlyArray<string>>>
}

export interface Stdio {
  readonly mode: "stdio"
  /**
   * `--request-state-key` (repeatable, comma lists split): the requestState keys, the signing key first, so
   * that processes given the same keys (a gateway's replicas, each with its own stdio upstream) open each
   * other's 2026-07-28 rounds. Secret.
   */
  readonly requestStateKeys?: ReadonlyArray<string>
}

/** The HTTP limits given on the command line; an absent one keeps the server's default. */
export interface Limits {
  /** Sessions open at once (`--max-sessions`). */
  readonly maxSessions?: number
  /** Sessions one remote address may hold (`--max-sessions-per-client`). */
  readonly maxSessionsPerClient?: number
  /** Seconds without a request or a read event before a session is closed (`--session-idle-timeout`). */
  readonly sessionIdleTimeoutSeconds?: number
  /** Seconds an SSE connection may leave events unread before it is closed (`--write-timeout`). */
  readonly writeTimeoutSeconds?: number
  /** Seconds between keepalive comments on a silent SSE connection (`--keepalive`). */
  readonly keepaliveSeconds?: number
}

export interface Http extends Limits {
  readonly mode: "http"
  readonly port: number
  readonly host: string
  /** Every request served on its own (no `Mcp-Session-Id`). */
  readonly stateless: boolean
  /** Requests answered with one JSON body instead of an SSE stream. */
  readonly json: boolean
  /** Host names accepted in `Host` and `Origin` (`--allowed-host`, repeatable); required on a wildcard bind. */
  readonly allowedHosts?: ReadonlyArray<string>
  /** Origins of web pages allowed to call the server (`--allowed-origin`, repeatable; CORS). */
  readonly allowedOrigins?: ReadonlyArray<string>
  /** `--no-dns-rebinding-protection`: accept any Host and Origin (behind a proxy that checks them). */
  readonly dnsRebindingProtection?: false
  /** `--auth`: the endpoints need access tokens. */
  readonly auth?: Auth
  /** `--cluster`: this process is a runner of a cluster. */
  readonly cluster?: Cluster
  /** `--event-store`: the database keeping resumable streams' events (`sqlite:<file>` or `postgres://...`). */
  readonly eventStore?: string
  /** `--request-state-key` (repeatable, comma lists split): the requestState keys, the signing key first. Secret. */
  readonly requestStateKeys?: ReadonlyArray<string>
  /** `--task-store`: the database keeping tasks (`sqlite:<file>` or `postgres://...`). */
  readonly taskStore?: string
  /** `--task-heartbeat`: how often (ms) this process records that its tasks' worker is alive. */
  readonly taskHeartbeatMs?: number
}

/** The cluster given on the command line (`--cluster` and the runner's address). */
export interface Cluster {
  /** The cluster's database URL (`--cluster`). */
  readonly storage: string
  /** The host other runners reach this one at (`--runner-host`, default 127.0.0.1). */
  readonly runnerHost: string
  /** The port other runners reach this one at (`--runner-port`). */
  readonly runnerPort: number
}

export type Cli = Stdio | Http | Help

const isUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}

const positive = (flag: string, value: string | undefined): number | string => {
  const n = Number(value)
  return value !== undefined && value !== "" && Number.isFinite(n) && n > 0 ? n : `${flag} needs a positive number`
}

const limitFlags: Record<string, keyof Limits> = {
  "--max-sessions": "maxSessions",
  "--max-sessions-per-client": "maxSessionsPerClient",
  "--session-idle-timeout": "sessionIdleTimeoutSeconds",
  "--write-timeout": "writeTimeoutSeconds",
  "--keepalive": "keepaliveSeconds"
}

const countFlags = new Set(["--max-sessions", "--max-sessions-per-client"])

/** Reads the command line; a string is the reason it is wrong. */
export const parse = (argv: ReadonlyArray<string>): Cli | string => {
  let mode: "stdio" | "http" | undefined
  let port = 0
  let host = "127.0.0.1"
  let stateless = false
  let json = false
  const limits: { -readonly [K in keyof Limits]: Limits[K] } = {}
  const allowedHosts: Array<string> = []
  const allowedOrigins: Array<string> = []
  let unprotected = false
  let httpOnly = false
  let auth = false
  let issuer: string | undefined
  let audience: string | undefined
  let scopes: Array<string> | undefined
  const toolScopes: Record<string, Array<string>> = {}
  let clusterStorage: string | undefined
  let runnerHost: string | undefined
  let runnerPort: number | undefined
  let eventStore: string | undefined
  let taskStore: string | undefined
  let taskHeartbeatMs: number | undefined
  const requestStateKeys: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const limit = limitFlags[arg]
    if (limit !== undefined) {
      const value = positive(arg, argv[++i])
      if (typeof value === "string") return value
      if (countFlags.has(arg) && !Number.isInteger(value)) return `${arg} needs a whole number`
      limits[limit] = value
      httpOnly = true
      continue
    }
    switch (arg) {
      case "--stdio":
      case "--http":
        if (mode !== undefined) return "choose one of --stdio and --http"
        mode = arg === "--stdio" ? "stdio" : "http"
        break
      case "--port": {
        const value = Number(argv[++i])
        if (!Number.isInteger(value) || value < 0 || value > 65535) return "--port needs a number from 0 to 65535"
        port = value
        httpOnly = true
        break
      }
      case "--host": {
        const value = argv[++i]
        if (value === undefined || value === "") return "--host needs a value"
        host = value
        break
      }
      case "--allowed-host":
      case "--allowed-origin": {
        const value = argv[++i]
        if (value === undefined || value === "") return `${arg} needs a value`
        ;(arg === "--allowed-host" ? allowedHosts : allowedOrigins).push(value)
        httpOnly = true
        break
      }
      case "--no-dns-rebinding-protection":
        unprotected = true
        httpOnly = true
        break
      case "--stateless":
        stateless = true
        httpOnly = true
        break
      case "--json":
        json = true
        httpOnly = true
        break
      case "--help":
      case "-h":
        return { mode: "help" }
      case "--auth":
        auth = true
        httpOnly = true
        break
      case "--auth-issuer":
      case "--auth-audience": {
        const value = argv[++i]
        if (value === undefined || !isUrl(value)) return `${arg} needs an http(s) URL`
        if (arg === "--auth-issuer") issuer = value
        else audience = value
        httpOnly = true
        break
      }
      case "--auth-scopes": {
        const value = argv[++i]
        if (value === undefined || value === "") return "--auth-scopes needs a comma-separated list"
        scopes = value.split(",").filter((scope) => scope !== "")
        httpOnly = true
        break
      }
      case "--cluster": {
        const value = argv[++i]
        if (value === undefined || !/^(sqlite:|postgres(ql)?:\/\/)/.test(value)) {
          return "--cluster needs a database URL (sqlite:<file> or postgres://...)"
        }
        clusterStorage = value
        httpOnly = true
        break
      }
      case "--runner-host": {
        const value = argv[++i]
        if (value === undefined || value === "") return "--runner-host needs a value"
        runnerHost = value
        httpOnly = true
        break
      }
      case "--runner-port": {
        const value = Number(argv[++i])
        if (!Number.isInteger(value) || value < 1 || value > 65535)
          return "--runner-port needs a number from 1 to 65535"
        runnerPort = value
        httpOnly = true
        break
      }
      case "--event-store": {
        const value = argv[++i]
        if (value === undefined || !/^(sqlite:.|postgres(ql)?:\/\/)/.test(value)) {
          return "--event-store needs a database URL (sqlite:<file> or postgres://...)"
        }
        eventStore = value
        httpOnly = true
        break
      }
      case "--task-store": {
        const value = argv[++i]
        if (value === undefined || !/^(sqlite:.|postgres(ql)?:\/\/)/.test(value)) {
          return "--task-store needs a database URL (sqlite:<file> or postgres://...)"
        }
        taskStore = value
        httpOnly = true
        break
      }
      case "--task-heartbeat": {
        const value = Number(argv[++i])
        if (!Number.isInteger(value) || value < 1) return "--task-heartbeat needs a positive number of milliseconds"
        taskHeartbeatMs = value
        httpOnly = true
        break
      }
      case "--request-state-key": {
        // The message never quotes the value: it is a secret.
        const keys = (argv[++i] ?? "").split(",").map((key) => key.trim())
        if (keys.some((key) => key === "")) return "--request-state-key needs a key (or a comma-separated list)"
        requestStateKeys.push(...keys)
        break
      }
      case "--auth-tool-scope": {
        const value = argv[++i] ?? ""
        const eq = value.indexOf("=")
        if (eq <= 0 || eq === value.length - 1) return "--auth-tool-scope needs <tool>=<scope>"
        const tool = value.slice(0, eq)
        toolScopes[tool] = [...(toolScopes[tool] ?? []), value.slice(eq + 1)]
        httpOnly = true
        break
      }
      default:
        return `unknown argument: ${arg}`
    }
  }
  if (mode === undefined) return "choose one of --stdio and --http"
  if (mode === "stdio") {
    if (httpOnly) return "HTTP options (--port, --stateless, --json, limits...) need --http"
    return requestStateKeys.length > 0 ? { mode, requestStateKeys } : { mode }
  }
  if (
    !auth &&
    (issuer !== undefined || audience !== undefined || scopes !== undefined || Object.keys(toolScopes).length > 0)
  ) {
    return "--auth-issuer, --auth-audience, --auth-scopes and --auth-tool-scope need --auth"
  }
  if (auth && issuer === undefined) return "--auth needs --auth-issuer <url>"
  if ((runnerHost !== undefined || runnerPort !== undefined) && clusterStorage === undefined) {
    return "--runner-host and --runner-port need --cluster"
  }
  if (clusterStorage !== undefined && runnerPort === undefined) return "--cluster needs --runner-port <n>"
  if (clusterStorage !== undefined && stateless) return "--cluster cannot be combined with --stateless"
  // A runner's tasks must be where every runner reads them: the cluster's database.
  if (clusterStorage !== undefined && taskStore !== undefined) {
    return "--cluster keeps tasks in the cluster's database: --task-store cannot be combined with it"
  }
  return {
    mode,
    port,
    host,
    stateless,
    json,
    ...limits,
    ...(allowedHosts.length > 0 ? { allowedHosts } : {}),
    ...(allowedOrigins.length > 0 ? { allowedOrigins } : {}),
    ...(unprotected ? { dnsRebindingProtection: false as const } : {}),
    ...(eventStore === undefined ? {} : { eventStore }),
    ...(requestStateKeys.length > 0 ? { requestStateKeys } : {}),
    ...(taskStore === undefined ? {} : { taskStore }),
    ...(taskHeartbeatMs === undefined ? {} : { taskHeartbeatMs }),
    ...(clusterStorage !== undefined && runnerPort !== undefined
      ? {
          cluster: {
            storage: clusterStorage,
            runnerHost: runnerHost ?? "127.0.0.1",
            runnerPort
          }
        }
      : {}),
    ...(auth && issuer !== undefined
      ? {
          auth: {
            issuer,
            ...(audience === undefined ? {} : { audience }),
            ...(scopes === undefined ? {} : { scopes }),
            ...(Object.keys(toolScopes).length === 0 ? {} : { toolScopes })
          }
        }
      : {})
  }
}
