/**
 * How a stdio server's exit reads in an error: the code or signal, then the
 * end of its stderr bounded to 20 lines and 4 KiB (the field keeps it all),
 * and how it is found behind the errors that wrap it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as PeerError from "@effect-mcp/engine/PeerError"
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Effect from "effect/Effect"

describe("StdioTransport.ServerExited", () => {
  it.effect("the message shows the last 20 lines of stderr", () =>
    Effect.sync(() => {
      const lines = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n")
      const exited = new StdioTransport.ServerExited({ exitCode: 2, signal: null, stderrTail: `${lines}\n\n` })
      const shown = exited.message.split("stderr ends with:\n")[1]!.split("\n")
      assert.strictEqual(shown.length, 20)
      assert.strictEqual(shown[0], "line 31")
      assert.strictEqual(shown[19], "line 50")
      assert.strictEqual(exited.stderrTail, `${lines}\n\n`)
    })
  )

  it.effect("a long line is cut to its last 4 KiB", () =>
    Effect.sync(() => {
      const exited = new StdioTransport.ServerExited({
        exitCode: null,
        signal: "SIGTERM",
        stderrTail: "x".repeat(10_000)
      })
      assert.strictEqual(exited.message, `the server process exited on SIGTERM; stderr ends with:\n${"x".repeat(4096)}`)
    })
  )

  it.effect("no stderr: the exit alone", () =>
    Effect.sync(() => {
      const exited = new StdioTransport.ServerExited({ exitCode: 1, signal: null, stderrTail: "" })
      assert.strictEqual(exited.message, "the server process exited with code 1")
    })
  )

  it.effect("found behind SessionClosed and TransportError; SessionClosed's message carries it", () =>
    Effect.sync(() => {
      const exited = new StdioTransport.ServerExited({ exitCode: 3, signal: null, stderrTail: "fatal\n" })
      const transport = new Transport.TransportError({ reason: "Closed", message: exited.message, cause: exited })
      const closed = new PeerError.SessionClosed({ method: "initialize", reason: "transport failed", cause: transport })
      assert.strictEqual(StdioTransport.serverExited(closed), exited)
      assert.strictEqual(
        closed.message,
        "initialize: session closed (transport failed): the server process exited with code 3; stderr ends with:\nfatal"
      )
      assert.isUndefined(StdioTransport.serverExited(new PeerError.SessionClosed({ method: "x", reason: "y" })))
    })
  )
})
