/**
 * McpHost over real processes and sockets, from one configuration file: the
 * everything server over stdio, the everything server over Streamable HTTP,
 * and the official reference server `@modelcontextprotocol/server-everything`
 * over stdio. The catalog holds every tool with no clash, calls run
 * concurrently on each, a killed stdio child is reported and respawned,
 * `list_changed` refreshes the catalog, and closing the host's scope leaves
 * no child process.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import type * as ServerStatus from "@effect-mcp/host/ServerStatus"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ServerProcess from "../support/ServerProcess.ts"

/** The reference server's entry point, from node_modules. */
const referenceBin = path.join(ServerProcess.root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")

const Handlers = Layer.mergeAll(
  SamplingHandler.layer((params) =>
    Effect.succeed({
      role: "assistant" as const,
      content: { type: "text" as const, text: `sampled ${params.messages.length}` },
      model: "scripted"
    })
  ),
  ElicitationHandler.layer({ form: () => Effect.succeed({ action: "decline" as const }) }),
  RootsHandler.layer([{ uri: "file:///tmp", name: "tmp" }])
)

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const block = result.content[0] as { readonly type: string; readonly text?: string } | undefined
  return block?.type === "text" ? (block.text ?? "") : ""
}

/** The first status change of `server` matching `f`, within 20 s. */
const next = (
  changes: Stream.Stream<ServerStatus.StatusChange>,
  server: string,
  f: (status: ServerStatus.ServerStatus) => boolean
) =>
  changes.pipe(
    Stream.filter((c) => c.server === server && f(c.status)),
    Stream.runHead,
    Effect.timeout("20 seconds"),
    Effect.map((found) => (found._tag === "Some" ? found.value.status : undefined))
  )

/**
 * Runs `watch` on `changes` in the scope; returns its fiber once the stream is subscribed, i.e. once its first
 * element (the snapshot `statusChanges` starts with, read after subscribing) went through: a change made after
 * this returns is seen by the watcher.
 */
const watching = <A, E>(
  changes: Stream.Stream<ServerStatus.StatusChange>,
  watch: (changes: Stream.Stream<ServerStatus.StatusChange>) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const subscribed = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkScoped(
      watch(changes.pipe(Stream.tap(() => Deferred.succeed(subscribed, undefined))))
    )
    yield* Deferred.await(subscribed)
    return fiber
  })

describe("McpHost over real servers", () => {
  it.live(
    "three servers from one config file: catalog, concurrent calls, a cancelled call, respawn, list_changed, no child left",
    () =>
      Effect.gen(function* () {
        const http = yield* ServerProcess.spawnHttp()
        const dir = yield* Effect.acquireRelease(
          Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "mcp-host-"))),
          (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
        )
        const file = path.join(dir, "mcp.json")
        yield* Effect.promise(() =>
          fs.writeFile(
            file,
            JSON.stringify({
              mcpServers: {
                effect: {
                  command: ServerProcess.node,
                  args: [...ServerProcess.sourceConditions, ServerProcess.everythingBin, "--stdio"],
                  cwd: ServerProcess.root
                },
                remote: { type: "http", url: http.url },
                reference: { command: ServerProcess.node, args: [referenceBin, "stdio"] }
              }
            })
          )
        )

        // What the stdio everything server writes to stderr (its test_long_running says started / cancelled there).
        const stderr = ServerProcess.makeRecorder()
        const decoder = new TextDecoder()
        const keepStderr = (name: string) =>
          name === "effect"
            ? (chunk: Uint8Array) => Effect.sync(() => stderr.append(decoder.decode(chunk, { stream: true })))
            : "capture"
        const hostScope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          McpHost.layerConfigFile(file, {
            clientInfo: { name: "host-test", version: "1.0.0" },
            startTimeout: "20 seconds",
            reconnect: McpHost.backoff({ base: "100 millis", cap: "1 second", times: 5 })
          }).pipe(Layer.provide([NodeConnector.layer({ stderr: keepStderr }), NodeServices.layer, Handlers])),
          hostScope
        )
        const host = Context.get(context, McpHost.McpHost)
        const [effect, remote, reference] = yield* Effect.all(
          [host.awaitReady("effect"), host.awaitReady("remote"), host.awaitReady("reference")],
          { concurrency: "unbounded" }
        )
        assert.strictEqual(effect.serverInfo?.name, "effect-mcp-everything-server")
        assert.strictEqual(remote.serverInfo?.name, "effect-mcp-everything-server")
        assert.isNumber(effect.pid)
        assert.isUndefined(remote.pid)
        assert.isNumber(reference.pid)
        // What the host declared follows from its handlers, the same for every server.
        for (const ready of [effect, remote, reference]) {
          assert.includeMembers(Object.keys(ready.clientCapabilities), ["sampling", "elicitation", "roots"])
        }

        // Every tool of every server, under its own name.
        const catalog = yield* host.catalog
        const names = catalog.tools.map((t) => t.name)
        assert.strictEqual(new Set(names).size, names.length)
        const of = (server: string) => catalog.tools.filter((t) => t.server === server).map((t) => t.item.name)
        const direct = Effect.fnUntraced(function* (server: string) {
          const client = yield* host.client(server)
          return (yield* Stream.runCollect(client.tools)).map((t) => t.name)
        })
        for (const server of ["effect", "remote", "reference"]) {
          assert.sameMembers(of(server), yield* direct(server), server)
        }
        assert.include(of("effect"), "test_simple_text")
        // The reference server shows the tools that need sampling, elicitation and roots (it hides them otherwise).
        assert.includeMembers(of("reference"), [
          "echo",
          "trigger-sampling-request",
          "trigger-elicitation-request",
          "get-roots-list"
        ])
        assert.include(names, "reference__echo")

        // Concurrent calls on each server.
        const results = yield* Effect.all(
          [
            host.callTool("effect__test_simple_text", {}),
            host.callTool("remote__test_simple_text", {}),
            host.callTool("reference__echo", { message: "hi" }),
            host.callTool("reference__trigger-sampling-request", { prompt: "p" }),
            host.callTool("effect__test_sampling", { prompt: "q" })
          ],
          { concurrency: "unbounded" }
        )
        assert.match(textOf(results[0]), /simple text/i)
        assert.match(textOf(results[1]), /simple text/i)
        assert.strictEqual(textOf(results[2]), "Echo: hi")
        assert.match(JSON.stringify(results[3].content), /sampled 1/)
        assert.match(JSON.stringify(results[4].content), /sampled 1/)

        // Interrupting a routed call cancels it on its server.
        const long = yield* Effect.forkScoped(host.callTool("effect__test_long_running", { durationMs: 30_000 }))
        const started = yield* ServerProcess.waitFor(stderr, /started (\S+)/)
        yield* Fiber.interrupt(long)
        yield* ServerProcess.waitFor(stderr, new RegExp(`cancelled ${started[1]}`))

        // list_changed refreshes the catalog.
        const dynamic = Deferred.makeUnsafe<void>()
        yield* host.catalogChanges.pipe(
          Stream.filter((c) => c.tools.some((t) => t.name === "effect__test_dynamic_tool")),
          Stream.runHead,
          Effect.andThen(Deferred.succeed(dynamic, undefined)),
          Effect.forkScoped
        )
        yield* host.callTool("effect__test_trigger_tool_change", {})
        yield* Deferred.await(dynamic).pipe(Effect.timeout("10 seconds"))
        assert.strictEqual(textOf(yield* host.callTool("effect__test_dynamic_tool", {})), "The dynamic tool is here")

        // Killing the stdio child: reported with the signal, respawned, and a later call succeeds.
        // Both watchers are subscribed before the kill.
        const degraded = yield* watching(host.statusChanges, (changes) =>
          next(changes, "effect", (s) => s._tag === "Degraded")
        )
        const respawned = yield* watching(host.statusChanges, (changes) =>
          next(changes, "effect", (s) => s._tag === "Ready" && s.connection.pid !== effect.pid)
        )
        process.kill(effect.pid!, "SIGKILL")
        const lost = yield* Fiber.join(degraded)
        assert.strictEqual(lost?._tag, "Degraded")
        if (lost?._tag === "Degraded") {
          assert.strictEqual(lost.failure.signal, "SIGKILL")
          assert.match(lost.failure.message, /exited on SIGKILL/)
        }
        const back = yield* Fiber.join(respawned)
        assert.strictEqual(back?._tag, "Ready")
        const newPid = back?._tag === "Ready" ? back.connection.pid : undefined
        assert.isNumber(newPid)
        assert.isFalse(ServerProcess.isAlive(effect.pid!))
        assert.match(textOf(yield* host.callTool("effect__test_simple_text", {})), /simple text/i)

        // Closing the host's scope stops every stdio server.
        yield* Scope.close(hostScope, Exit.void)
        assert.isFalse(ServerProcess.isAlive(newPid!), "the respawned everything server")
        assert.isFalse(ServerProcess.isAlive(reference.pid!), "the reference server")
        // Nothing else either: this process's only child left is the HTTP server the test started. (Each test file
        // runs in a process of its own, vitest's default `forks` pool: another file's children are not listed here.)
        const children = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" })
          .split("\n")
          .map((line) => line.trim().split(/\s+/))
          .filter(([pid, command]) => pid !== "" && command !== "ps" && Number(pid) !== http.process.pid)
        assert.deepStrictEqual(children, [])
      }),
    120_000
  )

  it.live(
    "a stdio server that exits at start is reported with its exit code and the tail of its stderr",
    () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(
          McpHost.layer({
            clientInfo: { name: "host-test", version: "1.0.0" },
            config: {
              mcpServers: {
                broken: {
                  command: ServerProcess.node,
                  args: ["-e", "process.stderr.write('missing API_KEY\\n'); process.exit(3)"]
                }
              }
            },
            reconnect: McpHost.backoff({ base: "50 millis", times: 1 })
          }).pipe(Layer.provide(NodeConnector.layer()))
        )
        const host = Context.get(context, McpHost.McpHost)
        const error = yield* Effect.flip(host.awaitReady("broken")).pipe(Effect.timeout("20 seconds"))
        assert.strictEqual(error.reason, "Unavailable")
        const status = yield* host.status("broken")
        assert.strictEqual(status._tag, "Failed")
        if (status._tag === "Failed") {
          assert.strictEqual(status.failure.exitCode, 3)
          assert.strictEqual(status.failure.stderrTail, "missing API_KEY\n")
          assert.match(status.failure.message, /exited with code 3; stderr ends with:\nmissing API_KEY/)
        }
      }),
    60_000
  )

  it.live(
    "a remote server that goes away is found by the health check, retried under the schedule, then Failed",
    () =>
      Effect.gen(function* () {
        const http = yield* ServerProcess.spawnHttp()
        const context = yield* Layer.build(
          McpHost.layer({
            clientInfo: { name: "host-test", version: "1.0.0" },
            config: { mcpServers: { remote: { url: http.url } } },
            healthCheck: { interval: "500 millis", timeout: "1 second" },
            reconnect: McpHost.backoff({ base: "100 millis", times: 2 })
          }).pipe(Layer.provide(NodeConnector.layer()))
        )
        const host = Context.get(context, McpHost.McpHost)
        yield* host.awaitReady("remote")
        // Subscribed before the kill.
        const seen = yield* watching(host.statusChanges, (changes) =>
          changes.pipe(
            Stream.filter((c) => c.server === "remote"),
            Stream.takeUntil((c) => c.status._tag === "Failed"),
            Stream.map((c) => c.status),
            Stream.runCollect,
            Effect.timeout("20 seconds")
          )
        )
        http.process.kill("SIGKILL")
        const statuses = yield* Fiber.join(seen)
        const tags = statuses.map((s) => (s._tag === "Degraded" && s.retryIn === undefined ? "Unhealthy" : s._tag))
        // Ready, one failed check (still connected), the second ends the connection; two retries fail.
        assert.deepStrictEqual(tags, [
          "Ready",
          "Unhealthy",
          "Degraded",
          "Connecting",
          "Degraded",
          "Connecting",
          "Failed"
        ])
        const failed = statuses.at(-1)!
        assert.match(
          failed._tag === "Failed" ? failed.failure.message : "",
          /POST http:\/\/127\.0\.0\.1:\d+\/mcp failed/
        )
        const error = yield* Effect.flip(host.callTool("remote__test_simple_text", {}))
        assert.strictEqual(error._tag === "HostError" ? error.reason : error._tag, "UnknownTool")
      }),
    60_000
  )
})
