/**
 * The code in the docs compiles: every ```ts block of the README and of the
 * guides in `docs/`, and every `@example` of the library packages' doc
 * comments, is written to a file of its own and type-checked against the
 * workspace's packages, as a user would paste it. A block whose first line is
 * `// <path>.ts` is that file of its doc (`// src/Server.ts`), so the blocks of
 * one doc can import each other. A block followed by a ```text tsc quote
 * must not compile: tsc must report what the quote says (see quotedOutputs.ts).
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
import { blocksOf, docFiles } from "./markdown.ts"
import * as QuotedOutputs from "./quotedOutputs.ts"

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

/** tsc's diagnostics (`--pretty false`) by file: each starts `file(line,col): error`, its details indented. */
const diagnosticsByFile = (output: string): Map<string, string> => {
  const byFile = new Map<string, string>()
  // What tsc says about no file in particular (a config error) is kept under "(tsc)".
  let current = "(tsc)"
  for (const line of output.split("\n")) {
    const start = /^(\S[^(]*)\(\d+,\d+\): /.exec(line)
    if (start !== null) current = start[1]!
    if (line !== "") byFile.set(current, `${byFile.get(current) ?? ""}${line}\n`)
  }
  return byFile
}

describe("docs", () => {
  it.live(
    "every ts block of the README and the guides and every @example of the packages type-checks",
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
        const write = (file: string, code: string) => {
          fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
          if (fs.existsSync(path.join(dir, file))) throw new Error(`two blocks are ${file}`)
          fs.writeFileSync(path.join(dir, file), code)
          files.push(file)
        }
        const files: Array<string> = []
        // The blocks that must fail, by the file tsc names, and the quote of what it must say.
        const failing = new Map<string, QuotedOutputs.ProgramQuote>()
        let blockCount = 0
        for (const doc of docFiles()) {
          const name = doc.replace(/\.md$/, "").replaceAll("/", "_")
          const blocks = blocksOf(doc)
          const quotes = QuotedOutputs.quotesOf(blocks).typeErrors
          blocks.forEach((block, i) => {
            if (block.lang !== "ts") return
            blockCount++
            const quote = quotes.find((q) => q.program === block)
            if (quote !== undefined) {
              const file = `${name}-fails-${i + 1}/${QuotedOutputs.tscFileName(quote)}`
              failing.set(file, quote)
              write(file, block.code)
              return
            }
            const named = QuotedOutputs.fileNameOf(block)
            write(named === undefined ? `${name}-${i + 1}.ts` : `${name}/${named}`, block.code)
          })
        }
        // The guides' blocks: getting started, serving, clients, hosts, testing, ... (80 of them).
        assert.isAtLeast(blockCount, 75)
        // getting-started's "Reading type errors": a missing service reported at runMain, then at the Layer.
        assert.isAtLeast(failing.size, 2)
        let exampleCount = 0
        for (const file of sourceFiles()) {
          examples(fs.readFileSync(file, "utf8")).forEach((code, i) => {
            const name = `${path.relative(packagesDir, file).replaceAll(path.sep, "_").replace(/\.ts$/, "")}-${i + 1}.ts`
            write(name, code)
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
          ChildProcess.make(
            node,
            [path.join(root, "node_modules/typescript/bin/tsc"), "-p", ".", "--pretty", "false"],
            {
              cwd: dir,
              stdin: "ignore"
            }
          )
        )
        const [stdout] = yield* Effect.all([collect(tsc.stdout), tsc.exitCode], { concurrency: "unbounded" })
        const byFile = diagnosticsByFile(stdout)
        const unexpected = [...byFile].filter(([file]) => !failing.has(file)).map(([, text]) => text)
        assert.deepStrictEqual(unexpected, [], unexpected.join(""))
        const mismatches = [...failing].flatMap(([file, quote]) =>
          QuotedOutputs.checkTypeErrors(quote, (byFile.get(file) ?? "").replaceAll(`${path.dirname(file)}/`, ""))
        )
        assert.deepStrictEqual(mismatches, [], QuotedOutputs.report(mismatches))
      }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)),
    120_000
  )
})
