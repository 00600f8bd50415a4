/**
 * stdout carries a stdio server's protocol from the first byte to the last: what its program logs before the
 * session is open (its Layer's build) and the runner's report when that build fails go to stderr. A real Node
 * process of `NodeMcpServer.serveStdio` under `NodeRuntime.runMain` (fixtures/layer-log-server.ts).
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

const server = fileURLToPath(new URL("./fixtures/layer-log-server.ts", import.meta.url))

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the server with `args`, sends a ping, ends stdin once a line is on stdout (or leaves it open for a server
 * that exits by itself), and resolves with what the process wrote once it has exited and its pipes are drained.
 */
const run = (args: ReadonlyArray<string>): Effect.Effect<Run> =>
  Effect.callback<Run>((resume) => {
    const child = spawn(process.execPath, [server, ...args], { stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk
      if (stdout.includes("\n")) child.stdin.end()
    })
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
    })
    // A server that failed may be gone before the ping is written.
    child.stdin.on("error", () => {})
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`)
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("NodeMcpServer.serveStdio keeps stdout for the protocol", () => {
  it.live(
    "what its Layer logs while it builds goes to stderr; stdout holds the answer only",
    () =>
      Effect.gen(function* () {
        const { code, stdout, stderr } = yield* run([])
        assert.strictEqual(stdout, `${JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} })}\n`, stderr)
        assert.match(stderr, /INFO .*loading configuration/)
        assert.include(stderr, "console.log while loading")
        assert.strictEqual(code, 0, stderr)
      }),
    30_000
  )

  it.live(
    "a Layer that fails: the runner's report goes to stderr, stdout stays empty, the exit code is 1",
    () =>
      Effect.gen(function* () {
        const { code, stdout, stderr } = yield* run(["--fail"])
        assert.strictEqual(stdout, "", stderr)
        assert.match(stderr, /INFO .*loading configuration/)
        assert.include(stderr, "console.log while loading")
        assert.match(stderr, /ERROR .*config missing/)
        assert.strictEqual(code, 1, stderr)
      }),
    30_000
  )
})
