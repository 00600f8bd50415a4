/**
 * A cluster of everything-server processes for the tests: runners on one
 * database (each with its own runner port), and a
 * forwarder on loopback standing in for a load balancer without sticky
 * sessions. The forwarder picks a backend per request (round-robin unless a
 * route says otherwise), skips backends the test marked dead, and tallies the
 * JSON-RPC responses it relays so a test can check each request was answered
 * exactly once. What it sees wakes the conditions of ./sse.ts's `until`.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http"
import { createServer as createNetServer } from "node:net"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { everythingBin, type HttpServer, node, spawnChild } from "../support/ServerProcess.ts"
import { settled } from "./settled.ts"
import { progressed } from "./sse.ts"

/** Shard locks expire in seconds, so a lost runner's sessions move within a test. */
export const fastFailover: Record<string, string> = {
  // A lock operation may take as long as the refresh interval: 2 s, so that a PostgreSQL round trip of a
  // runner starved of CPU (two busy loops beside the suite) does not mark its locks unhealthy and drop its
  // shards mid-test; a lost runner's shards still move within the 6 s expiry.
  MCP_CLUSTER_LOCK_EXPIRATION_MS: "6000",
  MCP_CLUSTER_LOCK_REFRESH_MS: "2000",
  MCP_CLUSTER_REFRESH_ASSIGNMENTS_MS: "500",
  MCP_CLUSTER_HEALTH_CHECK_MS: "1000"
}

/**
 * Shard timings for a cluster in which no runner is lost: assignments read as
 * often as with `fastFailover` (shards move as soon, and settle as fast), but
 * a lock lasts effect's default 35 s and each lock operation may take 5 s, so
 * a runner starved of CPU on a loaded machine keeps its shards (and its sessions).
 */
export const steady: Record<string, string> = {
  MCP_CLUSTER_LOCK_REFRESH_MS: "5000",
  MCP_CLUSTER_REFRESH_ASSIGNMENTS_MS: "500"
}

/** A port free on 127.0.0.1 now (a runner's port is its identity: it cannot be 0). */
export const freePort: Effect.Effect<number> = Effect.callback<number>((resume) => {
  const server = createNetServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/

/** One runner of the cluster. */
export interface Runner extends HttpServer {
  readonly runnerPort: number
}

/**
 * Starts one runner on `storage` (killed when the scope closes) and returns
 * once it listens; the cluster may still be moving shards to it (see
 * `settled`). Its runner port is free when asked (it is the runner's
 * identity, so it cannot be 0), but another process may take it before the
 * runner binds: a runner that exits on EADDRINUSE starts again on another port.
 */
export const startRunner = (
  storage: string,
  flags: ReadonlyArray<string> = [],
  timings: Record<string, string> = steady
): Effect.Effect<Runner, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const runnerPort = yield* freePort
    const child = yield* spawnChild(
      node,
      [everythingBin, "--http", "--port", "0", ...flags, "--cluster", storage, "--runner-port", String(runnerPort)],
      { env: { ...process.env, ...timings } }
    )
    const match = yield* child.waitForStderr(listening, 60_000)
    const base = match[1]!
    return { ...child, base, url: `${base}/mcp`, runnerPort }
  }).pipe(Effect.retry({ times: 2, while: (error) => String(error).includes("EADDRINUSE") }))

/**
 * Starts `count` runners: the first, then the others at once once it listens
 * (its tables made); or all at once with `together` (they then create the
 * cluster's tables at the same moment). Returns once the
 * cluster has settled (./settled.ts): every shard held by the runner it is
 * assigned to.
 */
export const startRunners = (
  count: number,
  storage: string,
  flags: ReadonlyArray<string> = [],
  options: {
    readonly together?: boolean | undefined
    /** `fastFailover` for a test that loses a runner; `steady` otherwise. */
    readonly timings?: Record<string, string> | undefined
  } = {}
): Effect.Effect<Array<Runner>, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const start = startRunner(storage, flags, options.timings)
    // Without `together`, the first runner creates the tables alone; the others then start side by side.
    const first = options.together === true ? [] : [yield* start]
    const runners: Array<Runner> = [
      ...first,
      ...(yield* Effect.all(
        Array.from({ length: count - first.length }, () => start),
        { concurrency: "unbounded" }
      ))
    ]
    // At the end, all at once and without a graceful shutdown (each would take up to seconds, one
    // after another): runs before the children's own finalizers, which then find them gone.
    yield* Effect.addFinalizer(() => Effect.forEach(runners, kill, { concurrency: "unbounded", discard: true }))
    // Shards move as runners join: the test starts once each runner holds exactly its share.
    yield* settled(
      storage,
      runners.map((runner) => runner.runnerPort)
    )
    return runners
  })

/** What the forwarder saw of one request. */
export interface Hop {
  readonly method: string
  /** The JSON-RPC method of a POST (the first of a batch), if any. */
  readonly rpc: string | undefined
  readonly backend: number
  readonly status: number
}

/** Picks the backend of a request (an index into the backends), or undefined for round-robin. */
export type Route = (hop: { readonly method: string; readonly rpc: string | undefined }) => number | undefined

/** The load balancer of a test. */
export interface Forwarder {
  /** The endpoint clients use, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  /** Every request relayed, in order. */
  readonly hops: Array<Hop>
  /** How many times each JSON-RPC response id was relayed to the client. */
  readonly answers: Map<string, number>
  /** Backends that are no longer chosen. */
  readonly dead: Set<number>
  /** Replaces the routing rule. */
  route: Route
}

const rpcOf = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body) as { readonly method?: unknown } | ReadonlyArray<{ readonly method?: unknown }>
    const first = Array.isArray(parsed) ? parsed[0] : parsed
    return typeof first?.method === "string" ? first.method : undefined
  } catch {
    return undefined
  }
}

const tally = (answers: Map<string, number>) => {
  const note = (message: unknown) => {
    const m = message as { readonly id?: unknown; readonly method?: unknown } | null
    if (m !== null && typeof m === "object" && m.method === undefined && m.id !== undefined && m.id !== null) {
      const key = String(m.id)
      answers.set(key, (answers.get(key) ?? 0) + 1)
    }
  }
  const parse = (data: string) => {
    try {
      const parsed = JSON.parse(data) as unknown
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) note(message)
    } catch {
      // a priming event or a partial body
    }
  }
  return { parse }
}

const readAll = (message: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    message.on("data", (chunk: Buffer) => chunks.push(chunk))
    message.on("end", () => resolve(Buffer.concat(chunks)))
    message.on("error", reject)
  })

/** A forwarder on 127.0.0.1:0 over `backends`, closed with the scope. */
export const forwarder = (
  backends: ReadonlyArray<{ readonly base: string }>
): Effect.Effect<Forwarder, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Server; readonly forwarder: Forwarder }>((resume) => {
      let next = 0
      const state = {
        hops: [] as Array<Hop>,
        answers: new Map<string, number>(),
        dead: new Set<number>(),
        route: (() => undefined) as Route
      }
      const pick = (method: string, rpc: string | undefined) => {
        const chosen = state.route({ method, rpc })
        if (chosen !== undefined && !state.dead.has(chosen)) return chosen
        for (let i = 0; i < backends.length; i++) {
          const candidate = next++ % backends.length
          if (!state.dead.has(candidate)) return candidate
        }
        return 0
      }
      const server = createServer((req, res) => {
        void readAll(req).then((body) => {
          const text = body.toString("utf8")
          const rpc = req.method === "POST" ? rpcOf(text) : undefined
          const backend = pick(req.method ?? "GET", rpc)
          const target = new URL(req.url ?? "/mcp", backends[backend]!.base)
          const headers = { ...req.headers, host: target.host }
          const upstream = httpRequest(target, { method: req.method, headers }, (reply) => {
            state.hops.push({ method: req.method ?? "", rpc, backend, status: reply.statusCode ?? 0 })
            progressed()
            res.writeHead(reply.statusCode ?? 502, reply.headers)
            const sse = (reply.headers["content-type"] ?? "").startsWith("text/event-stream")
            const counter = tally(state.answers)
            let rest = ""
            let json = ""
            reply.on("data", (chunk: Buffer) => {
              const piece = chunk.toString("utf8")
              if (sse) {
                const lines = (rest + piece).split("\n")
                rest = lines.pop() ?? ""
                for (const line of lines) if (line.startsWith("data:")) counter.parse(line.slice(5))
              } else json += piece
              res.write(chunk)
              progressed()
            })
            reply.on("end", () => {
              if (!sse && json.trim() !== "") counter.parse(json)
              res.end()
            })
            reply.on("error", () => res.destroy())
          })
          upstream.on("error", () => {
            state.hops.push({ method: req.method ?? "", rpc, backend, status: 502 })
            progressed()
            if (!res.headersSent) res.writeHead(502).end()
            else res.destroy()
          })
          res.on("close", () => upstream.destroy())
          upstream.end(body)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        const forwarder: Forwarder = Object.assign(state, { url: `http://127.0.0.1:${port}/mcp` })
        resume(Effect.succeed({ server, forwarder }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ forwarder }) => forwarder))

/** Kills a runner at once (no shutdown: its shards are left to expire). */
export const kill = (runner: Pick<Runner, "process">): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const child = runner.process
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

/**
 * A file the runners append each `tools/call` they start to (the everything
 * server's `MCP_CLUSTER_CALL_LOG`): `env` for the runners, and `runs()` counts
 * how many times each request id ran, across every runner (the killed ones too).
 */
export const callLog = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-cluster-calls-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(
  Effect.map((dir) => {
    const file = join(dir, "calls.log")
    return {
      env: { MCP_CLUSTER_CALL_LOG: file } as Record<string, string>,
      runs: (): Map<string, number> => {
        const runs = new Map<string, number>()
        const text = existsSync(file) ? readFileSync(file, "utf8") : ""
        for (const line of text.split("\n")) {
          const id = line.slice(line.indexOf(" ") + 1)
          if (line !== "") runs.set(id, (runs.get(id) ?? 0) + 1)
        }
        return runs
      }
    }
  })
)
