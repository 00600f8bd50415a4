/**
 * Each exit code docs/cli.md lists, for the cases test/cli/Cli.test.ts does
 * not cover, with the one line (or, with `--json`, the JSON object) each
 * prints on stderr: usage errors that say what they got, a config file that
 * cannot be read or decoded, a command that cannot be spawned, a refused
 * handshake, a missing capability, a missing resource, a lost connection, a
 * request timeout, a handshake timeout against servers that accept and never
 * answer, a stdio server that stops reading, and SIGTERM. `effect-mcp` runs as a real process; the servers are
 * the everything server, a scripted stdio server and silent `node:http` ones.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as SilentServer from "../support/SilentServer.ts"
import * as StallingServer from "../support/StallingServer.ts"
import { errorLine, type Ran, runCli } from "./runCli.ts"

const scripted = fileURLToPath(new URL("./scriptedServer.mjs", import.meta.url))

/** The JSON object `--json` prints on stderr for a failure. */
const errorJson = (ran: Ran) => {
  const lines = ran.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, `one line expected on stderr, got:\n${ran.stderr}`)
  return (JSON.parse(lines[0]!) as { readonly error: { readonly [key: string]: unknown } }).error
}

// Each check runs the CLI up to four times (each a Node process loading the sources): the limit only catches a hang.
const TIMEOUT = 180_000

const everything = ["--", ServerProcess.node, ServerProcess.everythingBin, "--stdio"]
const scriptedServer = (mode: string) => ["--", ServerProcess.node, scripted, mode]

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-exit-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

describe.concurrent("effect-mcp exit codes", () => {
  it.live(
    "2: a missing argument, too many, a JSON value that is not an object and no target each say what they got",
    () =>
      Effect.gen(function* () {
        const missing = yield* runCli(["call", ...everything])
        assert.strictEqual(missing.code, 2)
        assert.strictEqual(errorLine(missing), "expected <tool> [json-args] after the target, got nothing")

        const tooMany = yield* runCli(["read", "a://1", "b", "c", ...everything])
        assert.strictEqual(tooMany.code, 2)
        assert.strictEqual(errorLine(tooMany), 'expected <uri> after the target, got 3 ("a://1" "b" "c")')

        const array = yield* runCli(["call", "test_simple_text", "[1, 2]", ...everything])
        assert.strictEqual(array.code, 2)
        assert.match(errorLine(array), /must be a JSON object, like .*, got an array: "\[1, 2\]"$/)

        const noTarget = yield* runCli(["call"])
        assert.strictEqual(noTarget.code, 2)
        assert.match(errorLine(noTarget), /^no target: give a URL/)
      }),
    TIMEOUT
  )

  it.live(
    "2: a --timeout of no time or less, and a gateway --port out of range, are bad usage (not a timeout, not a crash)",
    () =>
      Effect.gen(function* () {
        // A server that never answers: were the flag taken, the handshake would time out (exit 5).
        const silent = ["--", ServerProcess.node, "-e", "setInterval(() => {}, 1000)"]
        for (const [command, timeout] of [
          ["ping", "0"],
          ["call", "-1"],
          ["watch", "0"]
        ] as const) {
          const ran = yield* runCli([command, `--timeout=${timeout}`, ...(command === "call" ? ["t"] : []), ...silent])
          assert.strictEqual(ran.code, 2, `${command} --timeout ${timeout}: ${ran.stderr}`)
          assert.include(
            ran.stderr,
            `Invalid value for flag --timeout: "${timeout}". Expected: a positive number of seconds`
          )
        }

        // Before, Node's listen threw on it: a defect, exit 4 and no message.
        const dir = yield* tempDir
        const config = path.join(dir, "mcp.json")
        fs.writeFileSync(config, JSON.stringify({ mcpServers: {} }))
        for (const port of ["-1", "65536"]) {
          const ran = yield* runCli(["gateway", "--config", config, `--port=${port}`])
          assert.strictEqual(ran.code, 2, `--port ${port}: ${ran.stderr}`)
          assert.include(ran.stderr, `Invalid value for flag --port: "${port}". Expected: a port from 0 to 65535`)
        }
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "3: a config file that is missing, not JSON, or with a header of the wrong type (its value never quoted)",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const missing = yield* runCli(["info", "--config", path.join(dir, "none.json"), "server"])
        assert.strictEqual(missing.code, 3)
        assert.strictEqual(errorLine(missing), `cannot read ${path.join(dir, "none.json")}: no such file`)

        const bad = path.join(dir, "bad.json")
        fs.writeFileSync(bad, "{ not json")
        const undecodable = yield* runCli(["info", "--config", bad, "server"])
        assert.strictEqual(undecodable.code, 3)
        assert.match(errorLine(undecodable), /bad\.json is not JSON: /)

        // A header of the wrong type: its type is said, never its value (a header carries tokens).
        const secret = path.join(dir, "secret.json")
        fs.writeFileSync(
          secret,
          JSON.stringify({
            mcpServers: { s: { url: "http://127.0.0.1:1/mcp", headers: { authorization: ["sekrit"] } } }
          })
        )
        const wrongHeader = yield* runCli(["info", "--config", secret, "s"])
        assert.strictEqual(wrongHeader.code, 3)
        assert.strictEqual(
          errorLine(wrongHeader),
          `${secret}: server "s", field headers.authorization: Expected string, got an array`
        )

        // A gateway whose port is taken: the listener's own line, said once.
        const config = path.join(dir, "mcp.json")
        fs.writeFileSync(config, JSON.stringify({ mcpServers: {} }))
        const taken = yield* Effect.acquireRelease(
          Effect.callback<net.Server>((resume) => {
            const server = net.createServer()
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
          }),
          (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
        )
        const port = (taken.address() as net.AddressInfo).port
        const busy = yield* runCli(["gateway", "--config", config, `--port=${port}`])
        assert.strictEqual(busy.code, 3)
        assert.strictEqual(errorLine(busy), `cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE)`)
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "3: a command not found, a server that exits at start, a refused connection (--json: the structured error)",
    () =>
      Effect.gen(function* () {
        const notFound = yield* runCli(["info", "--", "no-such-mcp-server-command"])
        assert.strictEqual(notFound.code, 3)
        assert.strictEqual(
          errorLine(notFound),
          "cannot connect: failed to start the server process `no-such-mcp-server-command`: not found (ENOENT)"
        )

        const exits = yield* runCli(["info", "--", ServerProcess.node, "-e", "process.exit(3)"])
        assert.strictEqual(exits.code, 3)
        // An empty stderr tail is left out, not printed as "stderr ends with:".
        assert.match(errorLine(exits), /the server process exited with code 3$/)

        // Dead before the CLI reads anything: its exit and its last words, not a broken pipe.
        const badOption = yield* runCli(["info", "--", ServerProcess.node, "--no-such-node-option"])
        assert.strictEqual(badOption.code, 3)
        assert.match(
          errorLine(badOption),
          /the server process exited with code 9; stderr ends with: .*bad option: --no-such-node-option$/
        )

        // Nothing listens there: the connection is refused.
        const closed = yield* ServerProcess.closedPort
        const refused = yield* runCli(["info", "--json", `http://127.0.0.1:${closed}/mcp`])
        assert.strictEqual(refused.code, 3)
        const report = errorJson(refused)
        assert.strictEqual(report.exitCode, 3)
        assert.strictEqual(report.systemCode, "ECONNREFUSED")
        assert.strictEqual(report.type, "InitializeError")
        assert.include(
          String(report.message),
          `POST http://127.0.0.1:${closed}/mcp failed: connection refused (ECONNREFUSED)`
        )
        assert.notInclude(refused.stderr, "    at ")
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "4: a refused handshake, a capability the server lacks, a resource that does not exist (its URI named)",
    () =>
      Effect.gen(function* () {
        const refused = yield* runCli(["info", ...scriptedServer("refuse")])
        assert.strictEqual(refused.code, 4)
        assert.strictEqual(errorLine(refused), "cannot connect: initialization failed: not today")

        const lacking = yield* runCli(["prompts", "--revision", "2025-06-18", ...scriptedServer("exit-on-call")])
        assert.strictEqual(lacking.code, 4)
        assert.match(errorLine(lacking), /prompts\/list: the server did not declare capability prompts/)

        const noResource = yield* runCli(["read", "test://no-such-resource", ...everything])
        assert.strictEqual(noResource.code, 4)
        assert.match(errorLine(noResource), /^server error -32\d+: Resource not found \("test:\/\/no-such-resource"\)$/)
      }),
    TIMEOUT
  )

  it.live(
    "5: the connection lost during the command, a request that timed out",
    () =>
      Effect.gen(function* () {
        const lost = yield* runCli(["call", "--revision", "2025-06-18", "crash", ...scriptedServer("exit-on-call")])
        assert.strictEqual(lost.code, 5)
        // The exit code and the stderr tail, on one line (the tail after a colon, no empty "ends with:;").
        assert.match(
          errorLine(lost),
          /^SessionClosed: tools\/call: .*the server process exited with code 7; stderr ends with: crashing on purpose$/
        )

        // The request's deadline is the behaviour under test: 1 s, the shortest --timeout.
        const timedOut = yield* runCli([
          "call",
          "--revision",
          "2025-06-18",
          "--timeout",
          "1",
          "crash",
          ...scriptedServer("hang-on-call")
        ])
        assert.strictEqual(timedOut.code, 5)
        assert.match(errorLine(timedOut), /^RequestTimeout: .*tools\/call/)

        // A listing too: --timeout is every request's deadline, not only the calls'.
        // Killed at 30 s: before, the listing waited out the default 60 s.
        const listing = yield* runCli(
          ["tools", "--revision", "2025-06-18", "--timeout", "1", ...scriptedServer("hang-on-list")],
          { timeoutMs: 30_000 }
        )
        assert.strictEqual(listing.code, 5, listing.stderr)
        assert.match(errorLine(listing), /^RequestTimeout: .*tools\/list/)
      }),
    TIMEOUT
  )

  it.live(
    "5: a handshake timeout against HTTP servers that accept and never answer (--timeout 1), naming the step",
    () =>
      Effect.gen(function* () {
        for (const sse of [false, true]) {
          const server = yield* SilentServer.make(sse)
          // The handshake's deadline is the behaviour under test: 1 s, the shortest --timeout.
          const ran = yield* runCli(["info", "--timeout", "1", server.url])
          assert.strictEqual(ran.code, 5, ran.stderr)
          assert.match(
            errorLine(ran),
            /^cannot connect: (initialize|server\/discover) got no answer within .*the handshake's deadline is 1 s/
          )
          // The CLI finishes within its deadline + 1 s of the server's first request. Its finish is the error
          // line: printed once the command has failed, as its connection is released. Measured to it, not to the
          // exit: what follows is the release and the process ending, which on a loaded machine was seen to take
          // 0.7 s more, and the code 5 above shows it came (a run that never ends is killed at 60 s).
          const requestedAt = yield* Deferred.await(server.requested)
          assert.isDefined(ran.erroredAt, ran.stderr)
          assert.isBelow(ran.erroredAt! - requestedAt, 2_000, sse ? "event-stream headers then nothing" : "no answer")
        }
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "5: a stdio server that stops reading (--timeout 1): the call times out, the CLI exits within the deadline + 1 s and stops it",
    () =>
      Effect.gen(function* () {
        // --server-stderr: the server's `stalled <pid>` comes through, timed, as the call starts (the CLI sends
        // `tools/call` right after `notifications/initialized`, and the server reads nothing after that).
        const ran = yield* runCli(["call", "--timeout", "1", "--server-stderr", "crash", ...scriptedServer("stall")])
        const exitedAt = Date.now()
        assert.strictEqual(ran.code, 5, ran.stderr)
        const stalled = ran.stderrLines.find(({ line }) => line.startsWith("stalled "))
        assert.isDefined(stalled, ran.stderr)
        const failed = ran.stderrLines.find(({ line }) => line.startsWith("effect-mcp: "))
        assert.isDefined(failed, ran.stderr)
        assert.match(failed!.line, /^effect-mcp: RequestTimeout: tools\/call \(id \d+\) timed out after 1\d{3} ms/)
        // The error line comes as the call fails, before the server is stopped (before: after it, 3 s after the
        // stall). The server never sees its stdin's end: it gets SIGTERM 0.5 s after (before: 2 s), then the CLI
        // exits; measured to the process's end, which can take 0.7 s more on a loaded machine (see above).
        assert.isBelow(failed!.at - stalled!.at, 2_000, "the error line within the deadline + 1 s")
        assert.isBelow(exitedAt - stalled!.at, 3_000, "the exit")
        const pid = Number(stalled!.line.slice("stalled ".length))
        assert.throws(() => process.kill(pid, 0), /ESRCH/, "the server is gone")
      }),
    TIMEOUT
  )

  it.live(
    "an HTTP server that stalls: a listing or the handshake's notification times out (5), an unanswered DELETE holds the exit 1 s, OAuth is named (3)",
    () =>
      Effect.gen(function* () {
        const listing = yield* StallingServer.make("tools/list")
        // The request's deadline is the behaviour under test: 1 s, the shortest --timeout.
        const timedOut = yield* runCli(["tools", "--revision", "2025-11-25", "--timeout", "1", listing.url], {
          timeoutMs: 30_000
        })
        assert.strictEqual(timedOut.code, 5, timedOut.stderr)
        assert.match(errorLine(timedOut), /^RequestTimeout: tools\/list \(id \d+\) timed out after 1\d{3} ms/)
        const requestedAt = yield* Deferred.await(listing.stalled)
        assert.isBelow(timedOut.erroredAt! - requestedAt, 2_000)

        // The handshake's notification never taken (a server must answer its POST 202): the handshake's deadline
        // holds (before, the CLI waited for it forever, whatever --timeout said).
        const notified = yield* StallingServer.make("notifications/initialized")
        const unacknowledged = yield* runCli(["tools", "--revision", "2025-11-25", "--timeout", "1", notified.url], {
          timeoutMs: 30_000
        })
        assert.strictEqual(unacknowledged.code, 5, unacknowledged.stderr)
        assert.match(
          errorLine(unacknowledged),
          /^cannot connect: notifications\/initialized was not taken within .*\(the handshake's deadline is 1 s\)$/
        )
        assert.isBelow(unacknowledged.erroredAt! - (yield* Deferred.await(notified.stalled)), 2_000)

        // Listed, then the DELETE that ends the session is never answered: the CLI, about to exit, waits 1 s
        // for it (before, 5 s). Measured to the process's end, which can take 0.7 s more on a loaded machine.
        const closing = yield* StallingServer.make("DELETE")
        const listed = yield* runCli(["tools", "--revision", "2025-11-25", closing.url], { timeoutMs: 30_000 })
        const exitedAt = Date.now()
        assert.strictEqual(listed.code, 0, listed.stderr)
        assert.isBelow(exitedAt - (yield* Deferred.await(closing.stalled)), 3_500)

        // An authorization server that never answers is what the error names, not the handshake step it held up
        // (before: "initialize got no answer within 2 s", exit 5): each discovery request has a quarter of it,
        // 1 s, against the probe's half, 2 s.
        const authorizing = yield* StallingServer.make("authorization")
        const login = yield* runCli(["tools", "--timeout", "4", authorizing.url], { timeoutMs: 30_000 })
        assert.strictEqual(login.code, 3, login.stderr)
        assert.match(
          errorLine(login),
          /^cannot connect: .*OAuth discovery failed: protected resource metadata \(http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\): the request timed out$/
        )
      }).pipe(Effect.scoped),
    TIMEOUT
  )

  it.live(
    "130: SIGTERM while watching ends the run (the stdio server stopped)",
    () =>
      Effect.gen(function* () {
        const watching = Deferred.makeUnsafe<void>()
        const ran = yield* runCli(["watch", ...everything], {
          onSpawn: (child) => {
            child.stderr?.on("data", (chunk: Buffer) => {
              if (chunk.toString().includes("watching")) {
                Deferred.doneUnsafe(watching, Exit.void)
                child.kill("SIGTERM")
              }
            })
          }
        })
        assert.isTrue(Deferred.isDoneUnsafe(watching), ran.stderr)
        assert.strictEqual(ran.code, 130, ran.stderr)
      }),
    TIMEOUT
  )
})
