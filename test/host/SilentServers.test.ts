/**
 * The host's start timeout holds for every transport: a Streamable HTTP
 * server that accepts and never answers, one that sends the headers of an
 * event stream and then nothing, and a legacy SSE server that never announces
 * its endpoint each go `Connecting` -> `Degraded` -> `Failed` on schedule,
 * while a healthy stdio server (a real child process) serves calls; closing
 * the host returns within a bound, mid-connect included, and leaves no child.
 * Stdio servers that never answer, and never end on their stdin's end, are
 * Degraded on schedule too, not after the grace their stop takes, and the
 * host stops them all within one grace, not one each.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import type * as ServerStatus from "@effect-mcp/host/ServerStatus"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { fileURLToPath } from "node:url"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as SilentServer from "../support/SilentServer.ts"

const scripted = fileURLToPath(new URL("../cli/scriptedServer.mjs", import.meta.url))

const healthy = {
  command: ServerProcess.node,
  args: [...ServerProcess.sourceConditions, ServerProcess.everythingBin, "--stdio"],
  cwd: ServerProcess.root
}

const silentNames = ["mute", "sseHeaders", "legacy"] as const

/** The host over the three silent servers and the healthy one, in a scope of its own the test closes. */
const startHost = (startTimeout: Duration.Input) =>
  Effect.gen(function* () {
    const mute = yield* SilentServer.make(false)
    const sseHeaders = yield* SilentServer.make(true)
    const legacy = yield* SilentServer.make(true)
    const hostScope = yield* Scope.make()
    // Closed with the test's scope too, should a check fail before the test closes it: no child outlives the test.
    yield* Effect.addFinalizer(() => Scope.close(hostScope, Exit.void))
    const context = yield* Layer.buildWithScope(
      McpHost.layer({
        clientInfo: { name: "silent-servers", version: "1.0.0" },
        config: {
          mcpServers: {
            healthy,
            mute: { type: "http", url: mute.url },
            sseHeaders: { type: "http", url: sseHeaders.url },
            legacy: { type: "sse", url: legacy.url }
          }
        },
        startTimeout,
        // The stdio child may take a while to start on a busy machine: it is not what is tested.
        servers: { healthy: { startTimeout: "30 seconds" } },
        reconnect: McpHost.backoff({ base: "100 millis", times: 1 }),
        healthCheck: false
      }).pipe(Layer.provide(NodeConnector.layer())),
      hostScope
    )
    return { host: Context.get(context, McpHost.McpHost), hostScope, silent: [mute, sseHeaders, legacy] }
  })

/** Every status of `server` until `until` holds (the first, from the host's snapshot, included). */
const statusesUntil = (
  host: McpHost.McpHostShape,
  server: string,
  until: (status: ServerStatus.ServerStatus) => boolean
) =>
  host.statusChanges.pipe(
    Stream.filter((c) => c.server === server),
    Stream.map((c) => c.status),
    Stream.takeUntil(until),
    Stream.runCollect
  )

/**
 * Closes the host's scope, failing the test when that takes over 10 s. The close runs on a fiber of its own: a
 * close that cannot be interrupted would hold a plain timeout until it ends, the awaiting of a fiber does not.
 */
const closeWithin = (scope: Scope.Closeable) =>
  Effect.gen(function* () {
    const closing = yield* Effect.forkDetach(Scope.close(scope, Exit.void))
    yield* Fiber.await(closing).pipe(
      Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.die("closing the host hung") })
    )
  })

const describeStatus = (status: ServerStatus.ServerStatus): string =>
  status._tag === "Connecting"
    ? `Connecting(${status.attempt})`
    : status._tag === "Ready"
      ? "Ready"
      : `${status._tag}: ${status.failure.message}`

describe("McpHost with servers that never answer", () => {
  it.live(
    "HTTP and SSE servers that accept and never answer are Degraded then Failed on schedule; the stdio server serves; close stops it",
    () =>
      Effect.gen(function* () {
        const started = Date.now()
        // A real start timeout: it is the behaviour under test (1 s, two attempts 100 ms apart).
        const { host, hostScope } = yield* startHost("1 second")
        const watched = yield* Effect.forEach(
          silentNames,
          (name) => Effect.forkScoped(statusesUntil(host, name, (s) => s._tag === "Failed")),
          { concurrency: "unbounded" }
        )
        const ready = yield* host.awaitReady("healthy")
        const result = yield* host.callTool("healthy__test_simple_text", {})
        assert.deepStrictEqual(result.content, [{ type: "text", text: "This is a simple text response for testing." }])

        // Each silent server: the first attempt times out, the retry too, then the schedule gives up.
        const seen = yield* Effect.forEach(watched, Fiber.join).pipe(
          // A backstop far beyond the schedule (2 x 1 s + 100 ms): a server stuck in Connecting fails here.
          Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.die("a silent server never Failed") })
        )
        const failedAfter = Date.now() - started
        for (const [i, name] of silentNames.entries()) {
          const why = `the server was not ready within 1s: ${
            name === "legacy" ? "the transport did not open" : "no answer to the handshake"
          }`
          const statuses = seen[i]!.map(describeStatus)
          // The watch starts with the status of the moment (Connecting(1), unless the machine was slow enough for
          // the first attempt to have run out already), then every change.
          const expected = ["Connecting(1)", `Degraded: ${why}`, "Connecting(2)", `Failed: ${why}`]
          assert.deepStrictEqual(statuses, expected.slice(expected.length - statuses.length), name)
          assert.isAtLeast(statuses.length, 3, name)
        }
        assert.isAtLeast(failedAfter, 2_000) // two attempts of 1 s each
        assert.isBelow(failedAfter, 8_000)
        // The healthy server still serves after the others gave up.
        yield* host.callTool("healthy__test_simple_text", {})
        assert.strictEqual((yield* host.status("healthy"))._tag, "Ready")

        const pid = ready.pid!
        assert.isTrue(ServerProcess.isAlive(pid))
        const closing = Date.now()
        yield* closeWithin(hostScope)
        // Closing stops the child (stdin closed, then SIGTERM, then SIGKILL after 2 s by default).
        assert.isBelow(Date.now() - closing, 5_000)
        assert.isFalse(ServerProcess.isAlive(pid), "the stdio child is still running")
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "closing the host while every silent server is mid-connect returns at once and stops the stdio child",
    () =>
      Effect.gen(function* () {
        const { host, hostScope, silent } = yield* startHost("30 seconds")
        const ready = yield* host.awaitReady("healthy")
        // Each silent server holds a request of the host's: the connections are under way.
        yield* Effect.forEach(silent, (s) => Deferred.await(s.requested))
        for (const name of silentNames) assert.strictEqual((yield* host.status(name))._tag, "Connecting", name)
        const closing = Date.now()
        yield* closeWithin(hostScope)
        assert.isBelow(Date.now() - closing, 5_000)
        assert.isFalse(ServerProcess.isAlive(ready.pid!), "the stdio child is still running")
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "stdio servers deaf to their stdin's end are Degraded on schedule, and closing the host stops them in one grace",
    () =>
      Effect.gen(function* () {
        // Two never read their stdin, one stops reading it once initialized (its listing never answered); none
        // ends on the stdin's end, so each stop waits the transport's grace (2 s) before SIGTERM. Each says its pid.
        const pids = new Set<number>()
        // Both attempts' processes have said theirs.
        const secondAttempts = Deferred.makeUnsafe<void>()
        const onStderr = (chunk: Uint8Array) =>
          Effect.sync(() => {
            for (const match of new TextDecoder().decode(chunk).matchAll(/(?:pid|stalled) (\d+)/g)) {
              pids.add(Number(match[1]))
            }
            if (pids.size === 6) Deferred.doneUnsafe(secondAttempts, Exit.void)
          })
        const deaf = {
          command: ServerProcess.node,
          args: ["-e", "console.error('pid ' + process.pid); setInterval(() => {}, 1000)"]
        }
        const names = ["deaf1", "deaf2", "stalled"] as const
        const hostScope = yield* Scope.make()
        // Closed with the test's scope too, should a check fail first: no process outlives the test.
        yield* Effect.addFinalizer(() => Scope.close(hostScope, Exit.void))
        const started = Date.now()
        const context = yield* Layer.buildWithScope(
          McpHost.layer({
            clientInfo: { name: "deaf-servers", version: "1.0.0" },
            config: {
              mcpServers: {
                deaf1: deaf,
                deaf2: deaf,
                stalled: { command: ServerProcess.node, args: [scripted, "stall"] }
              }
            },
            // A real start timeout: it is the behaviour under test.
            startTimeout: "1 second",
            reconnect: McpHost.backoff({ base: "100 millis", times: 1 }),
            healthCheck: false
          }).pipe(Layer.provide(NodeConnector.layer({ stderr: () => onStderr }))),
          hostScope
        )
        const host = Context.get(context, McpHost.McpHost)
        // When each first went Degraded: within the start timeout + 1 s (before: + 2 s, the stop's grace, first).
        const degraded = yield* Effect.forEach(
          names,
          (name) =>
            host.statusChanges.pipe(
              Stream.filter((c) => c.server === name && c.status._tag === "Degraded"),
              Stream.runHead,
              Effect.map((change) => ({
                after: Date.now() - started,
                status: describeStatus(Option.getOrThrow(change).status)
              }))
            ),
          { concurrency: "unbounded" }
        ).pipe(
          // A backstop: before, the server that stalls after the handshake stayed Connecting (its listing unbounded).
          Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.die("a server never went Degraded") })
        )
        for (const [i, name] of names.entries()) {
          assert.isBelow(degraded[i]!.after, 2_000, name)
          const why = name === "stalled" ? "no answer to the listing" : "no answer to the handshake"
          assert.strictEqual(degraded[i]!.status, `Degraded: the server was not ready within 1s: ${why}`, name)
        }
        // The second attempts' processes have started, so the first ones were stopped (a server's attempts
        // never overlap): three running.
        yield* Deferred.await(secondAttempts)
        const running = [...pids].filter(ServerProcess.isAlive)
        assert.lengthOf(running, 3, `running of ${[...pids].join(", ")}`)
        const closing = Date.now()
        yield* closeWithin(hostScope)
        // One grace (2 s) and the SIGTERM for all three (before: one after the other, 6 s).
        assert.isBelow(Date.now() - closing, 4_000)
        for (const pid of pids) assert.isFalse(ServerProcess.isAlive(pid), `process ${pid} is still running`)
      }).pipe(Effect.scoped),
    30_000
  )
})
