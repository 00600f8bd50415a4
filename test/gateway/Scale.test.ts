/**
 * Issue 30, item 8: `effect-mcp gateway` scaled out behind a load balancer
 * (test/cluster/support.ts's round-robin forwarder on loopback), as real
 * processes in front of our everything server (over HTTP, one for all, where a
 * 2026-07-28 client's rounds cross replicas; else over stdio, one per replica).
 *
 * - Stateless: three replicas given the same `--request-state-key`; an
 *   official SDK 2.x client on 2026-07-28 lists and calls tools, each request
 *   on the next replica, and answers an upstream's elicitation by
 *   `input_required` and a retry that lands on another replica than the first
 *   round. Without a shared key that retry is refused (the key is what makes it work).
 * - Clustered: two runners on one SQLite file (`--cluster --runner-port`); an
 *   official SDK 1.x client's stateful 2025-11-25 session (list, calls routed
 *   to the upstream, a call with progress) is served whichever runner a
 *   request reaches; a 2026-07-28 client's rounds are served where they land.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type Forwarder, forwarder, freePort } from "../cluster/support.ts"
import { runCli } from "../cli/runCli.ts"
import { settled } from "../cluster/settled.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import { callWithProgress, textOf } from "./fixture.ts"

const cliBin = fileURLToPath(new URL("../../apps/cli/bin/effect-mcp.js", import.meta.url))

const sharedKey = "gateway-replicas-0123456789abcdef0123456789"

/** A temporary directory for the scope, holding the config file (and the cluster's database). */
const workDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "mcp-gateway-scale-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

/**
 * The config every replica shares: our everything server, `everything__<tool>`: over stdio (a process per
 * replica), or the one at `upstreamUrl` for all. The gateway passes a 2026-07-28 upstream's rounds on, the
 * upstream's requestState inside its own: a retry landing on another replica must reach an upstream that opens
 * the state the first round's upstream sealed, the same one here (or one given the same request-state keys).
 */
const configFile = (dir: string, upstreamUrl?: string) =>
  Effect.gen(function* () {
    const file = path.join(dir, "mcp.json")
    const everything =
      upstreamUrl === undefined
        ? {
            command: ServerProcess.node,
            args: [...ServerProcess.sourceConditions, ServerProcess.everythingBin, "--stdio"],
            cwd: ServerProcess.root
          }
        : { url: upstreamUrl }
    yield* Effect.promise(() => fs.writeFile(file, JSON.stringify({ mcpServers: { everything } })))
    return file
  })

const listening = /effect-mcp gateway listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/

/** One `effect-mcp gateway` process on a free port with these flags, once it listens (killed with the scope). */
const gateway = (file: string, flags: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const child = yield* ServerProcess.spawnChild(
      ServerProcess.node,
      [cliBin, "gateway", "--config", file, "--port", "0", ...flags],
      { env: { ...process.env, ...env } }
    )
    const match = yield* child.waitForStderr(listening, 60_000)
    // A key given is never written out.
    assert.notInclude(child.stderr(), sharedKey)
    return { ...child, base: match[1]! }
  })

/** Starts `count` gateways side by side. */
const replicas = <A, E>(count: number, start: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.all(
    Array.from({ length: count }, () => start),
    { concurrency: "unbounded" }
  )

/** The SDK 2.x client on 2026-07-28 (auto negotiation) through `url`, answering each form as Ada. */
const sdk2 = (url: string) =>
  Effect.gen(function* () {
    const client = new Client2(
      { name: "scale-2", version: "2.4.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } }
    )
    const elicited: Array<string> = []
    client.setRequestHandler("elicitation/create", async (request) => {
      elicited.push(request.params.message)
      return { action: "accept", content: { username: "ada", email: "ada@example.com" } }
    })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(new Transport2(new URL(url)))),
      () => Effect.promise(() => client.close().catch(() => undefined))
    )
    assert.strictEqual(client.getNegotiatedProtocolVersion?.(), "2026-07-28")
    return { client, elicited }
  })

/** The backends of the `tools/call` POSTs the forwarder relayed since hop `from`, with their statuses. */
const callHops = (lb: Forwarder, from: number) =>
  lb.hops.slice(from).filter((hop) => hop.method === "POST" && hop.rpc === "tools/call")

/** Calls the eliciting tool through `lb`: the outcome and the backends of its rounds. */
const elicitAcross = (client: Client2, lb: Forwarder) =>
  Effect.gen(function* () {
    const before = lb.hops.length
    const outcome = yield* Effect.result(
      Effect.tryPromise(() =>
        client.callTool({ name: "everything__test_elicitation", arguments: { message: "Who are you?" } })
      )
    )
    return { outcome, rounds: callHops(lb, before) }
  })

/**
 * effect/cluster's own settings from the environment (ShardingConfig.layerFromEnv): assignments read every
 * 500 ms, so shards settle on the two runners within a second or two of their start; locks kept for effect's 35 s.
 */
const shardTimings = { REFRESH_ASSIGNMENTS_INTERVAL: "500 millis", SHARD_LOCK_REFRESH_INTERVAL: "5 seconds" }

/**
 * One gateway runner of the cluster on `storage`. Its runner port is free when asked (a runner's port is its
 * identity: it cannot be 0), but another process may take it before the runner binds: a runner that exits on
 * EADDRINUSE starts again on another port, as test/cluster/support.ts's do.
 */
const runner = (file: string, storage: string) =>
  Effect.gen(function* () {
    const runnerPort = yield* freePort
    const child = yield* gateway(file, ["--cluster", storage, "--runner-port", String(runnerPort)], {
      ...shardTimings,
      MCP_REQUEST_STATE_KEYS: sharedKey
    })
    return { ...child, runnerPort }
  }).pipe(Effect.retry({ times: 2, while: (error) => String(error).includes("EADDRINUSE") }))

/** The SDK 1.x client through `url` (a stateful session on the latest 2025 revision, 2025-11-25). */
const sdk1 = (url: string) =>
  Effect.gen(function* () {
    const client = new Client({ name: "scale-1", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(new URL(url))
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close().catch(() => undefined))
    )
    return { client, transport }
  })

describe("effect-mcp gateway at scale", () => {
  it.live(
    "stateless replicas with one request-state key: requests spread over all three, an ask's retry on another",
    () =>
      Effect.gen(function* () {
        const file = yield* configFile(yield* workDir, (yield* ServerProcess.spawnHttp()).url)
        // Two by the flag, one by the variable: the same key either way.
        const [a, b, c] = yield* Effect.all(
          [
            gateway(file, ["--request-state-key", sharedKey]),
            gateway(file, ["--request-state-key", sharedKey]),
            gateway(file, [], { MCP_REQUEST_STATE_KEYS: sharedKey })
          ],
          { concurrency: "unbounded" }
        )
        const lb = yield* forwarder([a!, b!, c!])
        const { client, elicited } = yield* sdk2(lb.url)
        const tools = yield* Effect.promise(() => client.listTools())
        assert.include(
          tools.tools.map((tool) => tool.name),
          "everything__test_simple_text"
        )
        const simple = yield* Effect.promise(() =>
          client.callTool({ name: "everything__test_simple_text", arguments: {} })
        )
        assert.strictEqual(textOf(simple), "This is a simple text response for testing.")
        const { outcome, rounds } = yield* elicitAcross(client, lb)
        assert.strictEqual(outcome._tag, "Success", String(outcome._tag === "Failure" ? outcome.failure : ""))
        if (outcome._tag === "Success") assert.match(textOf(outcome.success), /ada@example\.com/)
        assert.deepStrictEqual(elicited, ["Who are you?"])
        // The first round (answered input_required) and its retry (answered with the result), on two replicas.
        assert.strictEqual(rounds.length, 2)
        assert.notStrictEqual(rounds[0]!.backend, rounds[1]!.backend)
        // Round robin: every replica served some of the requests, each answered (once) with 200.
        const posts = lb.hops.filter((hop) => hop.method === "POST")
        assert.isAtLeast(posts.length, 4)
        assert.deepStrictEqual([...new Set(posts.map((hop) => hop.backend))].sort(), [0, 1, 2])
        for (const hop of posts) assert.strictEqual(hop.status, 200)
        for (const count of lb.answers.values()) assert.strictEqual(count, 1)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "stateless replicas each with a key of its own: the retry on the other replica is refused",
    () =>
      Effect.gen(function* () {
        const file = yield* configFile(yield* workDir)
        const lb = yield* forwarder(yield* replicas(2, gateway(file, [])))
        const { client } = yield* sdk2(lb.url)
        const { outcome, rounds } = yield* elicitAcross(client, lb)
        assert.strictEqual(outcome._tag, "Failure")
        // The SDK's error: invalid params (-32602) from the replica that cannot open the state the other sealed.
        if (outcome._tag === "Failure") {
          const error = outcome.failure.cause as { readonly code?: number; readonly message?: string }
          assert.strictEqual(error.code, -32602)
          assert.match(String(error.message), /requestState failed verification/)
        }
        assert.strictEqual(rounds.length, 2)
        assert.notStrictEqual(rounds[0]!.backend, rounds[1]!.backend)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "--cluster: two runners on SQLite serve one 2025-11-25 session, whichever runner a request reaches",
    () =>
      Effect.gen(function* () {
        const dir = yield* workDir
        const file = yield* configFile(dir, (yield* ServerProcess.spawnHttp()).url)
        const storage = `sqlite:${path.join(dir, "cluster.db")}`
        // Side by side on a new file: the runners create the cluster's tables at the same moment.
        const runners = yield* replicas(2, runner(file, storage))
        for (const r of runners) assert.match(r.stderr(), /\(cluster runner 127\.0\.0\.1:\d+\)/)
        // The test starts once each runner holds exactly its share of the shards.
        yield* settled(
          storage,
          runners.map((r) => r.runnerPort)
        )
        const lb = yield* forwarder(runners)
        const { client, transport } = yield* sdk1(lb.url)
        assert.isString(transport.sessionId)
        assert.strictEqual(transport.protocolVersion, "2025-11-25")
        const tools = yield* Effect.promise(() => client.listTools())
        assert.include(
          tools.tools.map((tool) => tool.name),
          "everything__test_tool_with_progress"
        )
        const simple = yield* Effect.promise(() =>
          client.callTool({ name: "everything__test_simple_text", arguments: {} })
        )
        assert.strictEqual(textOf(simple), "This is a simple text response for testing.")
        yield* callWithProgress(client, "everything__test_tool_with_progress")
        const greeted = yield* Effect.promise(() =>
          client.callTool({ name: "everything__greet", arguments: { name: "Ada" } })
        )
        assert.strictEqual(textOf(greeted), "Hello, Ada!")
        // The session's requests after initialize reached both runners (round robin), and each was answered once.
        const posts = lb.hops.filter((hop) => hop.method === "POST" && hop.rpc !== undefined)
        const calls = posts.filter((hop) => hop.rpc === "tools/call" || hop.rpc === "tools/list")
        assert.strictEqual(calls.length, 4)
        assert.deepStrictEqual([...new Set(calls.map((hop) => hop.backend))].sort(), [0, 1])
        for (const hop of posts) assert.include([200, 202], hop.status)
        for (const count of lb.answers.values()) assert.strictEqual(count, 1)
        // A 2026-07-28 client of the same runners: served where each request arrives, its retry on the other runner.
        const stateless = yield* sdk2(lb.url)
        const { outcome, rounds } = yield* elicitAcross(stateless.client, lb)
        assert.strictEqual(outcome._tag, "Success", String(outcome._tag === "Failure" ? outcome.failure : ""))
        assert.deepStrictEqual(stateless.elicited, ["Who are you?"])
        assert.strictEqual(rounds.length, 2)
        assert.notStrictEqual(rounds[0]!.backend, rounds[1]!.backend)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("scaling flags that cannot be used end it with exit code 2, a key never quoted", () =>
    Effect.gen(function* () {
      const file = yield* configFile(yield* workDir)
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
        [["--request-state-key", "too-short-secret"], /--request-state-key: .*at least 32 are needed/],
        [["--runner-port", "34000"], /--runner-port and --runner-host need --cluster/],
        [["--cluster", "sqlite:/nowhere/cluster.db"], /--cluster needs --runner-port/],
        [["--cluster", "mysql://db", "--runner-port", "34000", "--sse"], /--cluster needs a database URL/]
      ]
      const runs = yield* Effect.forEach(cases, ([flags]) => runCli(["gateway", "--config", file, ...flags]), {
        concurrency: "unbounded"
      })
      runs.forEach((ran, i) => {
        assert.strictEqual(ran.code, 2, ran.stderr)
        assert.match(ran.stderr, cases[i]![1])
        assert.notInclude(ran.stderr, "too-short-secret")
      })
    }).pipe(Effect.scoped)
  )
})
