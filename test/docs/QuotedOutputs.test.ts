/**
 * Every output the docs quote is what the code prints: each ```console
 * session is run against one everything server (the real bin over HTTP) and
 * each ```text output block's program is run with Node (see quotedOutputs.ts).
 * And the check can fail: a doc quoting a stale output is reported, the same
 * doc with the right output is not.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { closedPort, spawnHttp } from "../support/ServerProcess.ts"
import { blocks, blocksOf, docFiles } from "./markdown.ts"
import * as QuotedOutputs from "./quotedOutputs.ts"

class Targets extends Context.Service<Targets, QuotedOutputs.Targets>()("test/docs/Targets") {}

// One everything server for every session (each CLI run in this process is a few milliseconds).
const TargetsLive = Layer.effect(
  Targets,
  Effect.gen(function* () {
    const server = yield* spawnHttp()
    return { everything: server.base, closed: `127.0.0.1:${yield* closedPort}` }
  })
)

/** A doc of the given text, read as the check reads the repository's. */
const docOf = (markdown: string) => QuotedOutputs.quotesOf(blocks("stale.md", markdown))

const session = (lines: ReadonlyArray<string>) => ["```console", ...lines, "```", ""].join("\n")

describe("quoted outputs", () => {
  it("compares line by line, `...` standing for lines or for text within a line", () => {
    assert.isUndefined(QuotedOutputs.compare("ok (... ms)\n", "ok (12 ms)\n\n"))
    assert.isUndefined(QuotedOutputs.compare("a\n...\nd", "a\nb\nc\nd"))
    assert.isUndefined(QuotedOutputs.compare("a\n...\nb", "a\nb"))
    assert.isDefined(QuotedOutputs.compare("ok (... ms)", "failed (12 ms)"))
    assert.isDefined(QuotedOutputs.compare("a\nb", "a\nb\nc"))
    assert.deepStrictEqual(QuotedOutputs.words(`call x '{"a": 1}' "it's" a\\ b`), [
      "call",
      "x",
      '{"a": 1}',
      "it's",
      "a b"
    ])
  })

  // Live services: the CLI's deadlines (a handshake's `--timeout 1`) run on the real clock.
  layer(TargetsLive, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect(
      "every quote in the README and docs/ is what the code prints",
      () =>
        Effect.gen(function* () {
          const targets = yield* Targets
          const quotes = QuotedOutputs.merge(docFiles().map((file) => QuotedOutputs.quotesOf(blocksOf(file))))
          const steps = quotes.sessions.flatMap((s) => s.steps)
          // docs/cli.md's sessions (commands' outputs, failures, exit codes); getting-started's client, hosts.md's config error.
          assert.isAtLeast(steps.length, 15)
          assert.isAtLeast(quotes.outputs.length, 2)
          const mismatches = yield* QuotedOutputs.checkQuotes(quotes, targets)
          assert.deepStrictEqual(mismatches, [], QuotedOutputs.report(mismatches))
        }),
      120_000
    )

    it.effect(
      "a stale quote of a command's output fails the check; the right one passes",
      () =>
        Effect.gen(function* () {
          const targets = yield* Targets
          const stale = docOf(
            session([
              "$ effect-mcp call http://127.0.0.1:3000/mcp test_simple_text",
              "This was the simple text response once.",
              "$ effect-mcp call http://127.0.0.1:3000/mcp",
              "effect-mcp: expected <tool> [json-args] after the target, got nothing",
              "$ echo $?",
              "0"
            ])
          )
          const found = yield* QuotedOutputs.checkQuotes(stale, targets)
          assert.deepStrictEqual(
            found.map((m) => m.line),
            [2, 6],
            QuotedOutputs.report(found)
          )
          assert.include(found[0]!.reason, "This is a simple text response for testing.")
          const right = docOf(
            session([
              "$ effect-mcp call http://127.0.0.1:3000/mcp test_simple_text",
              "This is a simple text response for testing.",
              "$ effect-mcp call http://127.0.0.1:3000/mcp",
              "effect-mcp: expected <tool> [json-args] after the target, got nothing",
              "$ echo $?",
              "2"
            ])
          )
          assert.deepStrictEqual(yield* QuotedOutputs.checkQuotes(right, targets), [])
        }),
      120_000
    )
  })

  it.live(
    "a stale quote of a program's output fails the check; the right one passes",
    () =>
      Effect.gen(function* () {
        const program = [
          "```ts",
          'import * as McpConfig from "@effect-mcp/host/McpConfig"',
          'import * as Effect from "effect/Effect"',
          "",
          'const config = McpConfig.decode({ mcpServers: { files: { command: "npx", args: [1] } } })',
          "Effect.runPromise(Effect.flip(config)).then((error) => console.log(error.message))",
          "```",
          ""
        ].join("\n")
        const quote = (output: string) => docOf(`${program}\n\`\`\`text output\n${output}\n\`\`\`\n`)
        const targets = { everything: "http://127.0.0.1:1", closed: "127.0.0.1:1" }
        const [stale, right] = yield* Effect.all(
          [
            QuotedOutputs.checkQuotes(quote('server "files", field args: Expected string, got 1'), targets),
            QuotedOutputs.checkQuotes(quote('server "files", field args.0: Expected string, got 1'), targets)
          ],
          { concurrency: "unbounded" }
        )
        assert.strictEqual(stale.length, 1)
        assert.include(stale[0]!.reason, 'server "files", field args.0: Expected string, got 1')
        assert.deepStrictEqual(right, [])
      }),
    120_000
  )

  it("a stale quote of a type error fails the check; the right one passes", () => {
    // What Snippets.test.ts does with tsc's diagnostics for a ```text tsc quote.
    const doc = (diagnostic: string) =>
      docOf(["```ts", "const n: number = 'one'", "```", "", "```text tsc", diagnostic, "```", ""].join("\n"))
    const printed = "main.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'."
    const stale = doc("main.ts(1,7): error TS2322: Type 'string' is not assignable to type 'bigint'.").typeErrors[0]!
    assert.strictEqual(QuotedOutputs.tscFileName(stale), "main.ts")
    assert.strictEqual(QuotedOutputs.checkTypeErrors(stale, printed).length, 1)
    assert.deepStrictEqual(QuotedOutputs.checkTypeErrors(doc(printed).typeErrors[0]!, printed), [])
  })

  it("every block of a doc is one the checks know", () => {
    // ts: compiled (Snippets.test.ts); console and text output/tsc: quotes; js: shipping.md's recipe files;
    // json: configuration shown; sh: commands without output; text: a drawing or a layout, not an output.
    const known = new Set(["ts", "console", "text", "sh", "json", "js", ""])
    for (const file of docFiles()) {
      for (const block of blocksOf(file)) {
        assert.isTrue(known.has(block.lang), `${file}:${block.line}: a \`${block.lang}\` block`)
      }
    }
  })
})
