/**
 * The import-cycle check (`npm run cycles`) on a fixture: it must see through
 * TypeScript (a parser that silently skipped `.ts` files would pass any tree),
 * report a cycle of runtime imports and let a type-only import close a loop.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

const repoRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
const depcruise = Path.join(repoRoot, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs")

const fixture: Readonly<Record<string, string>> = {
  // a -> c -> b -> a at run time; a -> b is type-only, so a <-> b alone is not a runtime cycle.
  "a.ts": 'import type { B } from "./b.ts"\nimport { c } from "./c.ts"\nexport const a = (x: B) => c + x\n',
  "b.ts": 'import { a } from "./a.ts"\nexport type B = number\nexport const b = a\n',
  "c.ts": 'import { b } from "./b.ts"\nexport const c = 1\nexport const cb = b\n',
  // d <-> e through type-only imports only (`import type` and an import whose every specifier is a type).
  "d.ts": 'import type { E } from "./e.ts"\nexport type D = E\nexport const d = 1\n',
  "e.ts": 'import { type D } from "./d.ts"\nexport type E = D | string\nexport const e = 2\n'
}

interface Violation {
  readonly rule: { readonly name: string }
  readonly from: string
  readonly cycle?: ReadonlyArray<{ readonly name: string }>
}

interface Output {
  readonly summary: { readonly violations: ReadonlyArray<Violation>; readonly totalCruised: number }
}

const cruise = (dir: string): Promise<Output> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [depcruise, "--config", Path.join(repoRoot, ".dependency-cruiser.cjs"), "--output-type", "json", "src"],
      { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
      // Exits 1 when it finds a violation: the JSON on stdout is the verdict either way.
      (error, stdout, stderr) => {
        if (stdout.length > 0) resolve(JSON.parse(stdout) as Output)
        else reject(new Error(`depcruise failed: ${error?.message ?? ""}\n${stderr}`))
      }
    )
  })

describe("import-cycle check", () => {
  it.live("reports the runtime cycle and only it", () =>
    Effect.promise(async () => {
      const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-cycles-"))
      try {
        await Fs.mkdir(Path.join(dir, "src"))
        for (const [name, text] of Object.entries(fixture)) await Fs.writeFile(Path.join(dir, "src", name), text)
        const { summary } = await cruise(dir)
        assert.strictEqual(summary.totalCruised, 5)
        const cycles = summary.violations.filter((v) => v.rule.name === "no-circular")
        const members = cycles.map((v) => [v.from, ...(v.cycle ?? []).map((m) => m.name)].sort().join(" "))
        assert.isAbove(cycles.length, 0)
        for (const line of members) assert.strictEqual(line, "src/a.ts src/a.ts src/b.ts src/c.ts")
      } finally {
        await Fs.rm(dir, { recursive: true, force: true })
      }
    })
  )
})
