/**
 * The code in the docs compiles: every ```ts block of the guides below, and
 * every `@example` of the library packages' doc comments, is written to a
 * file of its own and type-checked against the workspace's packages, as a
 * user would paste it. Excerpts that are not whole programs are fenced as
 * ```typescript and left out.
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

const guides = [
  "getting-started.md",
  "composing-servers.md",
  "clients.md",
  "hosts.md",
  "authorization.md",
  "cancellation-progress-timeouts.md",
  "middleware.md",
  "observability.md",
  "revisions.md",
  "serving.md",
  "skills.md",
  "apps.md",
  "tasks.md",
  "testing.md"
]

/** The ```ts blocks of a markdown file. */
const snippets = (markdown: string): ReadonlyArray<string> =>
  [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)

const packagesDir = path.join(root, "packages")

/** The ```ts blocks of the `@example` tags of a source file, without their ` * ` margin. */
const examples = (source: string): ReadonlyArray<string> =>
  [...source.matchAll(/^[ \t]*\* @example\n[ \t]*\* ```ts\n([\s\S]*?)^[ \t]*\* ```$/gm)].map((match) =>
    match[1]!
      .split("\n")
      .map((line) => line.replace(/^[ \t]*\* ?/, ""))
      .join("\n")
  )

/** The library packages' source files (not tests). */
const sourceFiles = (): ReadonlyArray<string> =>
  fs
    .readdirSync(packagesDir)
    .flatMap((pkg) => {
      const src = path.join(packagesDir, pkg, "src")
      return fs.existsSync(src)
        ? fs
            .readdirSync(src, { recursive: true, encoding: "utf8" })
            .filter((file) => file.endsWith(".ts"))
            .map((file) => path.join(src, file))
        : []
    })
    .sort()

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  stream.pipe(
    Stream.decodeText(),
    Stream.mkString,
    Effect.orElseSucceed(() => "")
  )

describe("docs", () => {
  it.live(
    "every ts block of the guides and every @example of the packages type-checks",
    () =>
      Effect.gen(function* () {
        // Inside the workspace (under node_modules/.cache) so the packages resolve as they do for a user; a
        // folder of its own, so two runs at once do not share it.
        const cache = path.join(root, "node_modules/.cache")
        fs.mkdirSync(cache, { recursive: true })
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(cache, "doc-snippets-"))),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        )
        const files: Array<string> = []
        for (const guide of guides) {
          const blocks = snippets(fs.readFileSync(path.join(root, "docs", guide), "utf8"))
          assert.isAbove(blocks.length, 0, `${guide} has no ts block`)
          blocks.forEach((code, i) => {
            const file = `${guide.replace(/\.md$/, "")}-${i + 1}.ts`
            fs.writeFileSync(path.join(dir, file), code)
            files.push(file)
          })
        }
        let exampleCount = 0
        for (const file of sourceFiles()) {
          examples(fs.readFileSync(file, "utf8")).forEach((code, i) => {
            const name = `${path.relative(packagesDir, file).replaceAll(path.sep, "_").replace(/\.ts$/, "")}-${i + 1}.ts`
            fs.writeFileSync(path.join(dir, name), code)
            files.push(name)
            exampleCount++
          })
        }
        // The main entry points carry examples (McpServer.layer, Tool.make, McpClient.layer, the transports, ...).
        assert.isAtLeast(exampleCount, 20)
        fs.writeFileSync(
          path.join(dir, "tsconfig.json"),
          JSON.stringify({
            extends: "../../../tsconfig.base.json",
            compilerOptions: {
              noEmit: true,
              composite: false,
              incremental: false,
              declaration: false,
              declarationMap: false,
              types: ["node"],
              // A snippet is read on its own: unused names are fine in an excerpt.
              noUnusedLocals: false
            },
            files
          })
        )
        const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
        const tsc = yield* spawner.spawn(
          ChildProcess.make(node, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", dir], {
            cwd: root,
            stdin: "ignore"
          })
        )
        const [stdout, exitCode] = yield* Effect.all([collect(tsc.stdout), tsc.exitCode], { concurrency: "unbounded" })
        assert.strictEqual(exitCode, 0, stdout)
      }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)),
    120_000
  )
})
