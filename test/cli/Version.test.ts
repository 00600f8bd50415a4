/**
 * `effect-mcp --version` prints the version in apps/cli/package.json, the one `changeset version` bumps at a
 * release: nothing in the sources repeats it. A real process, on the sources (the built `dist/` reads the same
 * file: `Cli.ts` imports the package's own `package.json` by the package's name).
 */
import * as fs from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runCli } from "./runCli.ts"

const manifest = JSON.parse(fs.readFileSync(new URL("../../apps/cli/package.json", import.meta.url), "utf8")) as {
  readonly version: string
}

describe("effect-mcp --version", () => {
  it.live(
    "prints the version in apps/cli/package.json",
    () =>
      Effect.gen(function* () {
        const ran = yield* runCli(["--version"])
        assert.strictEqual(ran.code, 0, ran.stderr)
        assert.strictEqual(ran.stdout, `effect-mcp v${manifest.version}\n`)
      }),
    // One Node process loading the sources: the limit only catches a hang.
    120_000
  )
})
