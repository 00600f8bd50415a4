/**
 * The official SDK client drives the everything server over stdio: the
 * server is a real child process spawned by the SDK's StdioClientTransport.
 */
import type { ChildProcess } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as Everything from "./everything.ts"
import * as SdkClient from "./sdkClient.ts"

const mode: Everything.Mode = { asks: true, streams: true, cancelBy: "notification" }

const spawn = Effect.gen(function* () {
  const transport = new StdioClientTransport({
    command: ServerProcess.node,
    args: [...ServerProcess.sourceConditions, ServerProcess.everythingBin, "--stdio"],
    cwd: ServerProcess.root,
    stderr: "pipe"
  })
  const stderr = ServerProcess.record(transport.stderr, "the server's stderr")
  const sdk = yield* SdkClient.connect(transport)
  // The SDK keeps its child private; the test reads it to hear the exit instead of probing the pid.
  const child = (transport as unknown as { readonly _process?: ChildProcess })._process
  return { sdk, stderr, pid: () => transport.pid, child }
})

describe("interop: SDK client -> everything server over stdio", () => {
  it.live(
    "lists and calls every tool, reads every resource, gets every prompt",
    () =>
      Effect.gen(function* () {
        const { sdk } = yield* spawn
        yield* Everything.everything(sdk, mode)
      }),
    60_000
  )

  it.live(
    "cancelling test_long_running interrupts it on the server",
    () =>
      Effect.gen(function* () {
        const { sdk, stderr } = yield* spawn
        yield* Everything.cancelLongRunning(sdk, mode, (pattern) => ServerProcess.waitFor(stderr, pattern))
      }),
    60_000
  )

  it.live(
    "the server exits when the client closes it",
    () =>
      Effect.gen(function* () {
        const { sdk, pid, child } = yield* spawn
        const serverPid = pid()
        assert.isNumber(serverPid)
        assert.strictEqual(child?.pid, serverPid)
        yield* Effect.promise(() => sdk.client.close())
        // The exit event (the child reaped), then the pid is free: no process answers signal 0 any more.
        yield* Effect.callback<void>((resume) => {
          if (child!.exitCode !== null || child!.signalCode !== null) return resume(Effect.void)
          child!.once("exit", () => resume(Effect.void))
        }).pipe(Effect.timeout("10 seconds"))
        assert.throws(() => process.kill(serverPid!, 0))
      }),
    30_000
  )
})
