/**
 * `effect-mcp tools` shows each tool's arguments as `prompts` does, the
 * required ones marked with `*`, from the tool's input schema. A real CLI
 * process against the everything server over stdio.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"

const cliBin = fileURLToPath(new URL("../../apps/cli/bin/effect-mcp.js", import.meta.url))

/** Runs `effect-mcp args` to its end (killed after 60 s: only a hung run, even on a loaded machine). */
const runCli = (args: ReadonlyArray<string>) =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(ServerProcess.node, [cliBin, ...args], { cwd: ServerProcess.root, env: process.env })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

describe("effect-mcp tools", () => {
  it.live(
    "each tool's arguments follow its description, required ones marked",
    () =>
      Effect.gen(function* () {
        const ran = yield* runCli(["tools", "--", ServerProcess.node, ServerProcess.everythingBin, "--stdio"])
        assert.strictEqual(ran.code, 0, ran.stderr)
        const line = (name: string) => ran.stdout.split("\n").find((l) => l.startsWith(`${name} `)) ?? ""
        assert.match(line("greet"), /Greets someone .*\(name\*\)$/)
        assert.match(line("slow_compute"), /\(seconds\*, label\)$/)
        // A tool without arguments has no parentheses.
        assert.match(line("test_simple_text"), /[^)]$/)
      }),
    // Past the run's own 60 s bound, so a hung run fails with what it printed.
    90_000
  )
})
