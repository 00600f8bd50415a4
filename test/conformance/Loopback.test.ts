/**
 * The preload that keeps the conformance suite's own servers on loopback:
 * the argument rewriting, and a real `listen` in a process that preloads it.
 */
import { spawnSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ConformanceSuite from "../support/ConformanceSuite.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import { withLoopback } from "./loopback.ts"

const callback = () => {}

describe("loopback preload", () => {
  it.effect("adds 127.0.0.1 wherever listen() names no host", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(withLoopback([]), [0, "127.0.0.1"])
      assert.deepStrictEqual(withLoopback([callback]), [0, "127.0.0.1", callback])
      assert.deepStrictEqual(withLoopback([3000]), [3000, "127.0.0.1"])
      assert.deepStrictEqual(withLoopback(["3000", callback]), ["3000", "127.0.0.1", callback])
      assert.deepStrictEqual(withLoopback([0, 511, callback]), [0, "127.0.0.1", 511, callback])
      assert.deepStrictEqual(withLoopback([{ port: 0 }, callback]), [{ port: 0, host: "127.0.0.1" }, callback])
    })
  )

  it.effect("keeps an explicit host, a pipe path and a handle", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(withLoopback([0, "::1", callback]), [0, "::1", callback])
      assert.deepStrictEqual(withLoopback([{ port: 0, host: "::1" }]), [{ port: 0, host: "::1" }])
      assert.deepStrictEqual(withLoopback([{ path: "/tmp/sock" }]), [{ path: "/tmp/sock" }])
      assert.deepStrictEqual(withLoopback(["/tmp/sock"]), ["/tmp/sock"])
    })
  )

  it.live("binds a preloaded process's servers to 127.0.0.1", () =>
    Effect.sync(() => {
      const script = [
        "const net = require('node:net')",
        "const s = net.createServer()",
        "s.listen(0, () => { console.log(s.address().address); s.close() })"
      ].join(";")
      const run = spawnSync(ServerProcess.node, ["--import", ConformanceSuite.loopbackPreload, "-e", script], {
        encoding: "utf8",
        timeout: 15_000
      })
      assert.strictEqual(run.stderr, "")
      assert.strictEqual(run.stdout.trim(), "127.0.0.1")
    })
  )
})
