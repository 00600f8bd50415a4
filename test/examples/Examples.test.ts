/**
 * Every program in `examples/` run as a user runs it: a real Node process
 * from the sources (the source condition), which must exit 0 by itself. Each
 * example asserts its own output and exits non-zero when something differs;
 * here the last line it prints is checked too, and for the examples whose
 * output is known, the lines that show what they demonstrate.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Stream from "effect/Stream"
import { node, root } from "../support/ServerProcess.ts"

const examplesDir = path.join(root, "examples")

/** Every `.ts` file directly in examples/ is a program (tests and helpers would live elsewhere). */
const programs = fs
  .readdirSync(examplesDir)
  .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.endsWith(".d.ts"))
  .sort()

/** Lines that must appear in the output of the examples this test knows. */
const expected: { readonly [file: string]: ReadonlyArray<RegExp> } = {
  "gateway.ts": [
    /^catalog: 12 tools, work__add_note, work__confirm_clear, work__count_to, work__get_note, work__summarize, work__workspace$/m,
    /^home__count_to -> progress 1, 2, 3$/m,
    /^home__confirm_clear -> cleared; work__summarize -> summary: two items$/m
  ],
  "notes-server.ts": [/^tools: add_note, confirm_clear, count_to, get_note, summarize, workspace$/m],
  "client.ts": [
    /^get_note 7 -> NoteNotFound \{"id":"7"\}$/m,
    /^summarize -> summary: 1 message\(s\) read; confirm_clear -> cleared; workspace -> file:\/\/\/home\/me\/notes$/m
  ],
  "oauth-client.ts": [/^write_note -> 2 notes$/m, /^logins: \[notes:read\] then \[notes:read notes:write\]$/m],
  "progress-cancellation.ts": [
    /^progress 1\/3 step 1\nprogress 2\/3 step 2\nprogress 3\/3 step 3\nresult /m,
    /^cancelled after 2 updates; the server's handler was interrupted$/m,
    /^timeout -> RequestTimeout$/m
  ],
  "host.ts": [
    /^catalog: 12 tools, work__add_note, work__confirm_clear, work__count_to, work__get_note, work__summarize, work__workspace$/m,
    /^work note -> at ten; home note -> milk$/m,
    /^home: the server process exited on SIGKILL$/m,
    /^home: Ready -> Degraded -> Connecting -> Ready$/m,
    /^work__summarize -> summary: 1 message\(s\) read$/m
  ],
  "mcp-app.ts": [
    /^app tools: weather__forecast -> ui:\/\/weather\/dashboard, weather__refresh_forecast -> ui:\/\/weather\/dashboard$/m,
    /^shown to the model: weather__forecast$/m,
    /^ui:\/\/weather\/dashboard: text\/html;profile=mcp-app, \d+ bytes, connect-src https:\/\/api\.weather\.example$/m,
    /^forecast -> Sunny all week in Lisbon \(see the dashboard\)$/m
  ],
  "session-handoff.ts": [
    /^snapshot: \{"revision":"2025-11-25",.*"features":\{"logging\/level":"warning","resources\/subscriptions":\["status:\/\/now"\]\},"activeAt":\d+\}$/m,
    /^on the second server, same session: work -> done; logs heard: almost out of coffee$/m
  ],
  "revisions.ts": [
    /^client offering only 2024-11-05 -> 2024-11-05, 6 tools$/m,
    /^client offering only 2026-07-28 -> 2026-07-28, 6 tools$/m,
    /^server speaking 2024-11-05 and 2025-06-18 -> 2025-06-18$/m,
    /-> InitializeError \(UnsupportedVersion\)$/m
  ],
  "web-handler.ts": [
    /^2025-11-25: greet -> hello, Ada; count -> progress 1, 2, 3, counted to 3$/m,
    /^2026-07-28: greet -> hello, Ada; count -> progress 1, 2, 3, counted to 3$/m,
    /^POST http:\/\/evil\.example\.com\/mcp -> 403 \(not an allowed host\)$/m,
    /^a 100 KiB body -> 413 \(maxBodyBytes: 64 KiB\)$/m
  ]
}

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  stream.pipe(
    Stream.decodeText(),
    Stream.mkString,
    Effect.orElseSucceed(() => "")
  )

const run = (file: string) =>
  Effect.gen(function* () {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const child = yield* spawner.spawn(
      ChildProcess.make(node, ["--conditions=@effect-mcp/source", path.join(examplesDir, file)], {
        cwd: root,
        stdin: "ignore"
      })
    )
    const [stdout, stderr, exitCode] = yield* Effect.all(
      [collect(child.stdout), collect(child.stderr), child.exitCode],
      { concurrency: "unbounded" }
    )
    return { stdout, stderr, exitCode }
  }).pipe(Effect.timeout("60 seconds"), Effect.scoped, Effect.provide(NodeServices.layer))

describe("examples", () => {
  it("has the examples the guides link to", () => {
    for (const file of Object.keys(expected)) assert.include(programs, file)
  })

  for (const file of programs) {
    it.live(
      `${file} runs, checks itself and exits 0`,
      () =>
        Effect.gen(function* () {
          const { stdout, stderr, exitCode } = yield* run(file)
          assert.strictEqual(exitCode, 0, `stdout:\n${stdout}\nstderr:\n${stderr}`)
          for (const pattern of expected[file] ?? []) assert.match(stdout, pattern)
          if (expected[file] !== undefined)
            assert.strictEqual(stdout.trimEnd().split("\n").at(-1), `ok: ${file.slice(0, -".ts".length)}`)
        }),
      90_000
    )
  }
})
