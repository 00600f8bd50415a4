/**
 * The bins refuse a Node older than 22.19 in one line that says the version
 * found and the one needed (22.19 is the floor of effect's
 * `@effect/platform-node` and of undici: on 22.12 effect's HTTP server answers
 * every POST with an empty reply), and run on 22.19 and on any later major.
 * The version is made to look older or newer with a module loaded first
 * (`process.version` and `process.versions` are configurable); the Node is
 * this repository's.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"

const bins = {
  cli: { file: fileURLToPath(new URL("../../apps/cli/bin/effect-mcp.js", import.meta.url)), name: "effect-mcp" },
  everything: { file: ServerProcess.everythingBin, name: "mcp-everything-server" },
  conformance: {
    file: fileURLToPath(new URL("../../apps/conformance-client/bin/mcp-conformance-client.js", import.meta.url)),
    name: "mcp-conformance-client"
  }
}

/** Node's options that make this process look like Node `version` to the code it runs. */
const lookingLike = (version: string) => {
  const code = [
    `Object.defineProperty(process, "version", { value: "v${version}" });`,
    `Object.defineProperty(process.versions, "node", { value: "${version}" });`
  ].join("")
  return `--import=data:text/javascript,${encodeURIComponent(code)}`
}

/** Runs `bin args` on a Node that looks like `version`, to its end. */
const runBin = (bin: string, args: ReadonlyArray<string>, version: string) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(ServerProcess.node, [lookingLike(version), bin, ...args], {
      cwd: ServerProcess.root,
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const TIMEOUT = 60_000

describe("the bins' Node floor", () => {
  it.live(
    "22.18, 22.12 and 21 are refused in one line with the version found and the one needed; 22.19 and 23.0 run",
    () =>
      Effect.gen(function* () {
        for (const version of ["22.18.0", "22.12.0", "21.7.3"]) {
          for (const [bin, code] of [
            [bins.cli, 2],
            [bins.everything, 1],
            [bins.conformance, 1]
          ] as const) {
            const ran = yield* runBin(bin.file, ["--version"], version)
            assert.strictEqual(ran.code, code, `${bin.name} on ${version}: ${ran.stderr}`)
            assert.strictEqual(ran.stderr, `${bin.name} needs Node.js 22.19 or newer (this is v${version})\n`)
            assert.strictEqual(ran.stdout, "")
          }
        }
        // 23.0: a later major runs whatever its minor.
        for (const version of ["22.19.0", "23.0.0"]) {
          const cli = yield* runBin(bins.cli.file, ["--version"], version)
          assert.strictEqual(cli.code, 0, `effect-mcp on ${version}: ${cli.stderr}`)
          assert.match(cli.stdout, /^effect-mcp v\d/)
          // A bad command line: the server starts, reports the usage and exits with 2.
          const everything = yield* runBin(bins.everything.file, ["--bogus"], version)
          assert.strictEqual(everything.code, 2, `mcp-everything-server on ${version}: ${everything.stderr}`)
          assert.match(everything.stderr, /usage: mcp-everything-server --stdio/)
        }
      }),
    TIMEOUT
  )
})
