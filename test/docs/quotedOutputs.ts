/**
 * Outputs the docs quote, produced again from the code and compared with the
 * quote. A doc marks a quote by the info string of its block:
 *
 * - ```` ```console ````: a shell session. A line `$ effect-mcp <args>` runs the
 *   command line (`Cli.run` of `@effect-mcp/cli`, in this process) and the lines
 *   up to the next `$ ` are what it prints, stdout and stderr as they come;
 *   `$ echo $?` prints the exit code of the command before it. In a session,
 *   `http://127.0.0.1:3000` is the everything server as
 *   `npx mcp-everything-server --http --port 3000` serves it, `127.0.0.1:3999`
 *   is a port nothing listens on, and a file named after `--` is relative to
 *   the repository root.
 * - ```` ```text output ````: what the ```` ```ts ```` block before it prints
 *   when Node runs it (stdout and stderr), in a folder of its own where the
 *   doc's named blocks (a first line `// server.ts`) are those files, so a
 *   client can spawn the doc's server.
 * - ```` ```text tsc ````: what `tsc` reports for the ```` ```ts ```` block
 *   before it, which must not compile (checked by `Snippets.test.ts`, in its
 *   one type-check of every block; the file is named as the quote's first
 *   line names it).
 *
 * A quote matches when its lines are the output's lines (trailing spaces and
 * blank lines at either end aside), where `...` on a line of its own stands for
 * any number of lines and `...` inside a line for any text on that line.
 * Anything else a doc shows in a block is not a quote the check knows:
 * commands without their output go in ```` ```sh ```` blocks.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { format } from "node:util"
import * as Cli from "@effect-mcp/cli/Cli"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { node, root } from "../support/ServerProcess.ts"
import type { Block } from "./markdown.ts"

/** Where a quote is, for the report. */
export interface Place {
  readonly file: string
  /** The line of the quote's first line (1-based). */
  readonly line: number
}

/** One command of a session and the output quoted after it. */
export interface Step extends Place {
  readonly command: string
  readonly expected: string
}

/** A ```` ```console ```` block. */
export interface Session extends Place {
  readonly steps: ReadonlyArray<Step>
}

/** A ```` ```text output ```` or ```` ```text tsc ```` block and the ```` ```ts ```` block it quotes. */
export interface ProgramQuote extends Place {
  readonly program: Block
  readonly expected: string
  /** The doc's ts blocks that name their file (`// server.ts`), by that name. */
  readonly files: ReadonlyMap<string, string>
}

/** The file a ts block names on its first line (`// src/Server.ts`), if it names one. */
export const fileNameOf = (block: Block): string | undefined => /^\/\/ ([\w./-]+\.ts)\n/.exec(block.code)?.[1]

/** The quotes of a doc's blocks. */
export interface Quotes {
  readonly sessions: ReadonlyArray<Session>
  readonly outputs: ReadonlyArray<ProgramQuote>
  readonly typeErrors: ReadonlyArray<ProgramQuote>
}

/** A quote the code does not produce (or could not be run). */
export interface Mismatch extends Place {
  readonly reason: string
}

const programBefore = (blocks: ReadonlyArray<Block>, i: number): Block => {
  const block = blocks[i]!
  const before = blocks[i - 1]
  if (before?.lang !== "ts") {
    throw new Error(`${block.file}:${block.line}: a \`text ${block.tags[0]}\` block must follow the ts block it quotes`)
  }
  return before
}

/** Finds the quotes among `blocks` (one doc's, in order). */
export const quotesOf = (blocks: ReadonlyArray<Block>): Quotes => {
  const sessions: Array<Session> = []
  const outputs: Array<ProgramQuote> = []
  const typeErrors: Array<ProgramQuote> = []
  const files = new Map<string, string>()
  for (const block of blocks) {
    const name = block.lang === "ts" ? fileNameOf(block) : undefined
    if (name !== undefined) files.set(name, block.code)
  }
  blocks.forEach((block, i) => {
    if (block.lang === "console") sessions.push(sessionOf(block))
    if (block.lang !== "text" || block.tags.length === 0) return
    const program = programBefore(blocks, i)
    const quote = { file: block.file, line: block.line + 1, program, expected: block.code, files }
    if (block.tags[0] === "output") outputs.push(quote)
    else if (block.tags[0] === "tsc") typeErrors.push(quote)
    else throw new Error(`${block.file}:${block.line}: unknown quote \`text ${block.tags.join(" ")}\``)
  })
  return { sessions, outputs, typeErrors }
}

/** The steps of a ```` ```console ```` block. */
export const sessionOf = (block: Block): Session => {
  const steps: Array<{ command: string; line: number; expected: Array<string> }> = []
  block.code
    .split("\n")
    .slice(0, -1)
    .forEach((text, i) => {
      const line = block.line + 1 + i
      if (text.startsWith("$ ")) steps.push({ command: text.slice(2), line, expected: [] })
      else if (steps.length === 0) throw new Error(`${block.file}:${line}: a session starts with a \`$ \` command`)
      else steps[steps.length - 1]!.expected.push(text)
    })
  return {
    file: block.file,
    line: block.line + 1,
    steps: steps.map((step) => ({
      file: block.file,
      line: step.line,
      command: step.command,
      expected: step.expected.join("\n")
    }))
  }
}

/** The words of a command line, as a POSIX shell splits them (quotes and backslashes; no expansions). */
export const words = (line: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  let word: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === " " || c === "\t") {
      if (word !== undefined) found.push(word)
      word = undefined
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end === -1) throw new Error(`an unterminated quote in: ${line}`)
      word = (word ?? "") + line.slice(i + 1, end)
      i = end
    } else if (c === '"') {
      let text = ""
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) i++
        text += line[i]
      }
      if (i >= line.length) throw new Error(`an unterminated quote in: ${line}`)
      word = (word ?? "") + text
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i]
    } else {
      word = (word ?? "") + c
    }
  }
  if (word !== undefined) found.push(word)
  return found
}

const lines = (text: string): ReadonlyArray<string> => {
  const all = text.split("\n").map((line) => line.trimEnd())
  let start = 0
  let end = all.length
  while (start < end && all[start] === "") start++
  while (end > start && all[end - 1] === "") end--
  return all.slice(start, end)
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const lineMatcher = (expected: string): ((actual: string) => boolean) => {
  if (!expected.includes("...")) return (actual) => actual === expected
  const pattern = new RegExp(`^${expected.split("...").map(escape).join(".*")}$`)
  return (actual) => pattern.test(actual)
}

/**
 * Whether `actual` is what `expected` quotes: undefined when it is, else
 * what differs (the first line that does not match, or the lines missing).
 */
export const compare = (expected: string, actual: string): string | undefined => {
  const want = lines(expected)
  const got = lines(actual)
  const matchers = want.map((line) => (line === "..." ? undefined : lineMatcher(line)))
  // Whether want[i..] matches got[j..]; memoised, as `...` lines may try many splits.
  const memo = new Map<number, boolean>()
  const from = (i: number, j: number): boolean => {
    const key = i * (got.length + 1) + j
    const known = memo.get(key)
    if (known !== undefined) return known
    let result: boolean
    if (i === want.length) result = j === got.length
    else if (matchers[i] === undefined) result = from(i + 1, j) || (j < got.length && from(i, j + 1))
    else result = j < got.length && matchers[i]!(got[j]!) && from(i + 1, j + 1)
    memo.set(key, result)
    return result
  }
  if (from(0, 0)) return undefined
  return `the quote:\n${want.map((l) => `  | ${l}`).join("\n")}\nthe output:\n${got.map((l) => `  | ${l}`).join("\n")}`
}

/** Where the quotes' placeholders are on this machine. */
export interface Targets {
  /** The everything server's `http://127.0.0.1:<port>`, standing for `http://127.0.0.1:3000`. */
  readonly everything: string
  /** `127.0.0.1:<port>` where nothing listens, standing for `127.0.0.1:3999`. */
  readonly closed: string
}

const quotedEverything = "http://127.0.0.1:3000"
const quotedClosed = "127.0.0.1:3999"

const toMachine = (text: string, targets: Targets) =>
  text.replaceAll(quotedEverything, targets.everything).replaceAll(quotedClosed, targets.closed)

const toQuote = (text: string, targets: Targets) =>
  text
    .replaceAll(targets.everything, quotedEverything)
    .replaceAll(targets.closed, quotedClosed)
    .replaceAll(`${root}`, "")

/** A Console writing to one text, as a terminal shows stdout and stderr together. */
const capturingConsole = () => {
  let text = ""
  const write = (...args: ReadonlyArray<unknown>) => {
    text += `${format(...args)}\n`
  }
  const console: Console.Console = Object.assign(Object.create(globalThis.console) as Console.Console, {
    log: write,
    info: write,
    warn: write,
    error: write,
    debug: write
  })
  return { console, text: () => text }
}

/** Runs `effect-mcp argv` in this process and returns what it printed and its exit code. */
export const runCli = (
  argv: ReadonlyArray<string>
): Effect.Effect<{ readonly output: string; readonly code: number }> =>
  Effect.suspend(() => {
    const capture = capturingConsole()
    return Cli.run(argv).pipe(
      Effect.provide(NodeServices.layer),
      Effect.provideService(Console.Console, capture.console),
      Effect.map((code) => ({ output: capture.text(), code }))
    )
  })

/** A file after `--` named relative to the repository root, made absolute (the CLI spawns in this cwd). */
const serverCommand = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const end = argv.indexOf("--")
  return argv.map((arg, i) =>
    end !== -1 && i > end && !path.isAbsolute(arg) && arg.includes("/") && fs.existsSync(path.join(root, arg))
      ? path.join(root, arg)
      : arg
  )
}

/** Runs a session's steps in order and returns the steps whose output differs from the quote. */
export const checkSession = (session: Session, targets: Targets): Effect.Effect<ReadonlyArray<Mismatch>> =>
  Effect.gen(function* () {
    const mismatches: Array<Mismatch> = []
    let lastCode: number | undefined
    for (const step of session.steps) {
      const argv = words(toMachine(step.command, targets))
      let output: string
      if (argv[0] === "echo" && argv[1] === "$?" && argv.length === 2 && lastCode !== undefined) {
        output = `${lastCode}\n`
      } else if (argv[0] === "effect-mcp") {
        const ran = yield* runCli(serverCommand(argv.slice(1)))
        lastCode = ran.code
        output = toQuote(ran.output, targets)
      } else {
        mismatches.push({ ...step, reason: `not a command the check runs: $ ${step.command}` })
        continue
      }
      const differs = compare(step.expected, output)
      if (differs !== undefined) mismatches.push({ ...step, reason: `$ ${step.command}\n${differs}` })
    }
    return mismatches
  })

/**
 * Runs `main` with Node as a user runs a `.ts` file, in a folder of its own
 * holding `files` (a project with `"type": "module"`, as getting-started.md
 * sets it up) beside a `node_modules` that is the workspace's, so the packages
 * resolve as installed ones do; returns what it printed, stdout then stderr.
 */
export const runProgram = (files: ReadonlyMap<string, string>, main: string): Effect.Effect<string> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-doc-output-"))
      fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir")
      fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify({ type: "module" })}\n`)
      for (const [name, code] of files) {
        fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
        fs.writeFileSync(path.join(dir, name), code)
      }
      return dir
    }),
    (dir) =>
      Effect.callback<string>((resume) => {
        // The workspace's packages resolve to their sources through this condition (NODE_OPTIONS carries it
        // to the processes the program starts).
        const child = spawn(node, ["--conditions=@effect-mcp/source", main], {
          cwd: dir,
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
        // Only a hung program: the docs' programs end in a second or two.
        const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
        child.on("close", () => {
          clearTimeout(timer)
          resume(Effect.succeed(stdout + stderr))
        })
        return Effect.sync(() => {
          clearTimeout(timer)
          child.kill("SIGKILL")
        })
      }),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** The file the quoted program is run as: the name it gives itself, or `main.ts`. */
const programName = (quote: ProgramQuote): string => fileNameOf(quote.program) ?? "main.ts"

/** Runs the program an `output` quote quotes and compares. */
export const checkOutput = (quote: ProgramQuote): Effect.Effect<ReadonlyArray<Mismatch>> =>
  Effect.map(
    runProgram(new Map([...quote.files, [programName(quote), quote.program.code]]), programName(quote)),
    (output) => {
      const differs = compare(quote.expected, output.replaceAll(root, ""))
      return differs === undefined ? [] : [{ file: quote.file, line: quote.line, reason: differs }]
    }
  )

/** The file name a `tsc` quote gives the program (`server.ts(21,21): error ...`), or `main.ts`. */
export const tscFileName = (quote: ProgramQuote): string =>
  /^([\w.-]+\.ts)\(\d+,\d+\)/.exec(lines(quote.expected)[0] ?? "")?.[1] ?? "main.ts"

/** Compares a `tsc` quote with the diagnostics tsc printed for its program (paths as the quote names it). */
export const checkTypeErrors = (quote: ProgramQuote, diagnostics: string): ReadonlyArray<Mismatch> => {
  const differs = compare(quote.expected, diagnostics)
  return differs === undefined ? [] : [{ file: quote.file, line: quote.line, reason: differs }]
}

/** Checks every session and output quote of `quotes` (sessions one step at a time, quotes side by side). */
export const checkQuotes = (quotes: Quotes, targets: Targets): Effect.Effect<ReadonlyArray<Mismatch>> =>
  Effect.map(
    Effect.all(
      [...quotes.sessions.map((session) => checkSession(session, targets)), ...quotes.outputs.map(checkOutput)],
      { concurrency: "unbounded" }
    ),
    (found) => found.flat()
  )

/** Merges the quotes of several docs. */
export const merge = (all: ReadonlyArray<Quotes>): Quotes => ({
  sessions: all.flatMap((quotes) => quotes.sessions),
  outputs: all.flatMap((quotes) => quotes.outputs),
  typeErrors: all.flatMap((quotes) => quotes.typeErrors)
})

/** A report of mismatches, one paragraph each. */
export const report = (mismatches: ReadonlyArray<Mismatch>): string =>
  mismatches.map((m) => `${m.file}:${m.line}: ${m.reason}`).join("\n\n")
