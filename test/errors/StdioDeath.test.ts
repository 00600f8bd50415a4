/**
 * A stdio server that dies before answering is reported with its exit code
 * or signal and the last lines of its stderr, in the error the client's
 * connect fails with. The servers are real child processes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as Effect from "effect/Effect"

/** A Node child that writes 30 numbered lines and a last word to stderr, then ends as `end` says. */
const dying = (end: string) =>
  NodeStdio.layerClient({
    command: process.execPath,
    args: [
      "-e",
      `for (let i = 1; i <= 30; i++) console.error("boot line " + i); console.error("fatal: config missing"); ${end}`
    ]
  })

const connectError = (end: string) =>
  McpClient.make({ clientInfo: { name: "stdio-death", version: "1.0.0" } }).pipe(
    Effect.provide(dying(end)),
    Effect.scoped,
    Effect.flip
  )

describe("a stdio server that dies at start", () => {
  it.live(
    "exit code 3: the client's error has the code and the tail of stderr",
    () =>
      Effect.gen(function* () {
        const error = yield* connectError("process.exit(3)")
        assert.strictEqual(error._tag, "InitializeError")
        assert.include(error.message, "the server process exited with code 3; stderr ends with:\n")
        assert.include(error.message, "boot line 30\nfatal: config missing")
        // The message keeps the last 20 lines; the error keeps what was captured.
        assert.include(error.message, "boot line 12\n")
        assert.notInclude(error.message, "boot line 11\n")
        const exited = StdioTransport.serverExited(error)
        assert.isDefined(exited)
        assert.strictEqual(exited!.exitCode, 3)
        assert.isNull(exited!.signal)
        assert.include(exited!.stderrTail, "boot line 1\n")
      }),
    30_000
  )

  it.live(
    "killed by a signal: the client's error names the signal",
    () =>
      Effect.gen(function* () {
        const error = yield* connectError(`process.kill(process.pid, "SIGKILL")`)
        assert.strictEqual(error._tag, "InitializeError")
        assert.include(error.message, "the server process exited on SIGKILL; stderr ends with:\n")
        assert.include(error.message, "fatal: config missing")
        const exited = StdioTransport.serverExited(error)
        assert.strictEqual(exited?.signal, "SIGKILL")
        assert.isNull(exited?.exitCode)
      }),
    30_000
  )
})
