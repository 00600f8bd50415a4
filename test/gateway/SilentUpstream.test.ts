/**
 * `effect-mcp gateway` beside an upstream that never answers (a real child
 * that reads nothing and ignores its stdin's end), with a healthy one (our
 * everything server): the gateway listens at once, answers its first client
 * once the silent upstream's start timeout has settled it (not before, not
 * long after) with the healthy upstream's tools, says on stderr which
 * upstream is unavailable and why; over stdio, the end of its input ends it
 * at once rather than after the wait; and no upstream outlives it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import { cliBin, configFile, everythingStdio, spawnGateway, toolNames } from "./fixture.ts"

/** A config file of the healthy and the silent upstream, with the gateway section `gateway`. */
const configOf = (gateway: object) =>
  configFile({
    mcpServers: {
      everything: everythingStdio,
      silent: {
        command: ServerProcess.node,
        args: ["-e", "console.error('silent pid ' + process.pid); setInterval(() => {}, 1000)"]
      }
    },
    gateway
  })

/** The silent upstream's pid, from the gateway's stderr (`--server-stderr`); killed with the scope if still alive. */
const silentPid = (gateway: ServerProcess.Child) =>
  Effect.gen(function* () {
    const pid = Number((yield* gateway.waitForStderr(/silent pid (\d+)/))[1])
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (ServerProcess.isAlive(pid)) process.kill(pid, "SIGKILL")
      })
    )
    return pid
  })

/** Waits (at most `ms`) for `child` to exit; true if it did. */
const exitsWithin = (gateway: ServerProcess.Child, ms: number) =>
  gateway
    .waitForStderr(/(?!)/, ms)
    .pipe(Effect.match({ onFailure: (error) => /the child exited/.test(error.message), onSuccess: () => false }))

describe("effect-mcp gateway beside a silent upstream", () => {
  it.live(
    "listens at once, answers when the start timeout settles the silent upstream, says why it is missing",
    () =>
      Effect.gen(function* () {
        const file = yield* configOf({ startTimeoutSeconds: 3, awaitUpstreamsSeconds: 30 })
        const { gateway, url } = yield* spawnGateway(file, ["--server-stderr"])
        const listening = performance.now()
        const pid = yield* silentPid(gateway)
        const client = new Client({ name: "sdk", version: "1.0.0" })
        yield* Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url))))
        const answered = (performance.now() - listening) / 1000
        // Before: the gateway listened only once its upstreams had settled, and answered at once then.
        assert.isAtLeast(answered, 1, "initialize was answered before the silent upstream settled")
        // The silent upstream's start timeout (3 s, counted from before the listener was up) + 1 s.
        assert.isAtMost(answered, 4, "initialize was answered long after the silent upstream settled")
        const tools = yield* toolNames(client)
        assert.include(tools, "everything__greet")
        assert.notInclude(tools.join(" "), "silent__")
        yield* gateway.waitForStderr(
          /upstream "silent" is unavailable \(trying again in \d+m?s\): the server was not ready within 3s: no answer to the handshake$/m
        )
        yield* Effect.promise(() => client.close())
        // Stopped, the gateway stops its upstreams, the silent one (deaf to its stdin's end) included.
        gateway.process.kill("SIGTERM")
        assert.isTrue(yield* exitsWithin(gateway, 10_000), "the gateway did not exit within 10 s of SIGTERM")
        assert.isFalse(ServerProcess.isAlive(pid), `the silent upstream (${pid}) outlived the gateway`)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "over stdio, the end of its input ends it without waiting for the silent upstream",
    () =>
      Effect.gen(function* () {
        const file = yield* configOf({ startTimeoutSeconds: 30, awaitUpstreamsSeconds: 30 })
        const gateway = yield* ServerProcess.spawnChild(
          ServerProcess.node,
          [cliBin, "gateway", "--config", file, "--stdio", "--server-stderr"],
          { stdin: "pipe" }
        )
        const pid = yield* silentPid(gateway)
        gateway.process.stdin!.end()
        // Before: it read its input only once the upstreams had settled (30 s here), and ended then.
        assert.isTrue(yield* exitsWithin(gateway, 10_000), "the gateway did not exit within 10 s of its input's end")
        assert.isFalse(ServerProcess.isAlive(pid), `the silent upstream (${pid}) outlived the gateway`)
      }).pipe(Effect.scoped),
    60_000
  )
})
