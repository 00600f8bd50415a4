/**
 * The README's demo (`npm run demo`, apps/demo) end to end, as a newcomer runs
 * it: a real process whose host, from apps/demo/mcp.json, drives the everything
 * server over stdio and over HTTP. It must exit 0 by itself and print the
 * catalog, the progress bars of concurrent calls, the cancellation the server
 * confirmed, the respawn of the killed stdio server, and the summary.
 */
import * as path from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Stream from "effect/Stream"
import { node, root } from "../support/ServerProcess.ts"

const demoMain = path.join(root, "apps/demo/src/main.ts")

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  stream.pipe(
    Stream.decodeText(),
    Stream.mkString,
    Effect.orElseSucceed(() => "")
  )

const runDemo = Effect.gen(function* () {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const demo = yield* spawner.spawn(ChildProcess.make(node, [demoMain], { cwd: root, stdin: "ignore" }))
  const [stdout, stderr, exitCode] = yield* Effect.all([collect(demo.stdout), collect(demo.stderr), demo.exitCode], {
    concurrency: "unbounded"
  })
  return { stdout, stderr, exitCode }
}).pipe(
  // The demo bounds itself at 30 s; this bound is for a demo that does not.
  Effect.timeout("50 seconds"),
  Effect.scoped,
  Effect.provide(NodeServices.layer)
)

const count = (text: string, pattern: RegExp) => [...text.matchAll(new RegExp(pattern, "g"))].length

describe("npm run demo", () => {
  it.live(
    "a host from apps/demo/mcp.json: the catalog, concurrent calls with progress bars, a cancellation, a respawn; exits 0",
    () =>
      Effect.gen(function* () {
        const { stdout, stderr, exitCode } = yield* runDemo
        assert.strictEqual(exitCode, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`)
        assert.match(stdout, /ready {4}local \(stdio, pid \d+\): effect-mcp-everything-server/)
        assert.match(stdout, /ready {4}remote \(http:\/\/127\.0\.0\.1:\d+\/mcp\): effect-mcp-everything-server/)
        // One catalog: each server's tools under its prefix.
        const perServer = [...stdout.matchAll(/catalog {2}(local|remote): (\d+) tools/g)].map((m) => [
          m[1],
          Number(m[2])
        ])
        assert.strictEqual(perServer.length, 2)
        assert.strictEqual(perServer[0]![1], perServer[1]![1])
        assert.match(stdout, new RegExp(`catalog {2}${(perServer[0]![1] as number) * 2} tools in all`))
        // Both calls drew their bars up to 100% and finished.
        for (const server of ["local", "remote"]) {
          assert.isAbove(count(stdout, new RegExp(`${server}__test_long_running +\\[[#-]{20}\\] +\\d+% \\d+/1000`)), 3)
          assert.match(stdout, new RegExp(`${server}__test_long_running +\\[#{20}\\] 100% 1000/1000`))
          assert.match(stdout, new RegExp(`${server}__test_long_running -> "Completed after \\d+ ms"`))
        }
        // The cancelled call: three bars, then the server's confirmation naming the request it had started.
        assert.strictEqual(count(stdout, /remote__test_long_running +\[[#-]{20}\] +\d+% \d+\/60000/), 3)
        const confirmed = stdout.match(/server stderr: "cancelled (\S+)"/)
        assert.isNotNull(confirmed)
        // The killed stdio server: reported, respawned with a new pid, and called again.
        const killed = stdout.match(/kill -9 (\d+)/)![1]!
        // The signal is named once (the message names it; no "(SIGKILL)" repeated after it).
        assert.match(stdout, /Degraded: the server process exited on SIGKILL/)
        assert.notMatch(stdout, /SIGKILL.*\(SIGKILL\)/)
        const respawned = stdout.match(/local respawned \(pid (\d+) -> (\d+)\)/)!
        assert.strictEqual(respawned[1], killed)
        assert.notStrictEqual(respawned[2], killed)
        assert.match(stdout, /local__test_simple_text -> "This is a simple text response for testing\."/)
        assert.match(stdout, new RegExp(`request ${confirmed![1]} cancelled`))
        assert.match(stdout, /\ndone in \d+\.\d s\n$/)
      }),
    60_000
  )
})
