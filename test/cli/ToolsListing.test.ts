/**
 * `effect-mcp tools` shows each tool's arguments as `prompts` does, the
 * required ones marked with `*`, from the tool's input schema. A real CLI
 * process against the everything server over stdio.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import { runCli } from "./runCli.ts"

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
