/**
 * The README's demo (`npm run demo`, apps/demo) end to end, as a newcomer runs
 * it: a real process that spawns the everything server over stdio and over
 * HTTP. It must exit 0 by itself and print the tools, the progress updates,
 * the cancellation the server confirmed, and the summary.
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
  // The demo bounds itself at 20 s; this bound is for a demo that does not.
  Effect.timeout("40 seconds"),
  Effect.scoped,
  Effect.provide(NodeServices.layer)
)

const count = (text: string, pattern: RegExp) => [...text.matchAll(new RegExp(pattern, "g"))].length

describe("npm run demo", () => {
  it.live(
    "drives the everything server over stdio and HTTP, then exits 0",
    () =>
      Effect.gen(function* () {
        const { stdout, stderr, exitCode } = yield* runDemo
        assert.strictEqual(exitCode, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`)
        assert.match(stdout, /── stdio/)
        assert.match(stdout, /── Streamable HTTP/)
        assert.match(stdout, /connect {2}http:\/\/127\.0\.0\.1:\d+\/mcp/)
        assert.strictEqual(count(stdout, /server {3}effect-mcp-everything-server/), 2)
        assert.strictEqual(count(stdout, /tools {4}\d+: /), 2)
        assert.strictEqual(count(stdout, /test_simple_text -> "This is a simple text response for testing\."/), 2)
        // Progress of both calls, printed as it arrived, then the result.
        assert.strictEqual(count(stdout, /progress 50\/100\n\s+progress 100\/100\n\s+result: /), 2)
        assert.strictEqual(count(stdout, /progress \d+\/60000/), 6)
        // The server confirmed each cancellation on its stderr, naming the request it had started.
        const confirmations = [...stdout.matchAll(/server stderr: "cancelled (\S+)"/g)].map((m) => m[1])
        assert.strictEqual(confirmations.length, 2)
        const summary = stdout.slice(stdout.indexOf("── summary"))
        assert.match(summary, /stdio +protocol \S+, \d+ tools, 3 progress updates, request \S+ cancelled/)
        assert.match(summary, /Streamable HTTP +protocol \S+, \d+ tools, 3 progress updates, request \S+ cancelled/)
        assert.match(stdout, /\ndone in \d+\.\d s\n$/)
      }),
    60_000
  )
})
