/**
 * `effect-mcp` prints a server's text with its control characters escaped, so
 * that a hostile server cannot drive the user's terminal: clear the screen
 * (CSI 2J), set the window title or write the clipboard (OSC 0, OSC 52), send a
 * C1 CSI (U+009B), or overwrite what was printed with `\r` and backspaces.
 * Real CLI processes against hostileServer.mjs (stdio), whose every text
 * carries all of these: the listings, the results, a progress message and a
 * log line each show them as visible escapes, keeping only the layout's own
 * newlines and tabs and the progress line's own `\r` and erase-line.
 */
import type { ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import { type Ran, runCli } from "./runCli.ts"

const server = ["--", ServerProcess.node, fileURLToPath(new URL("./hostileServer.mjs", import.meta.url))]

/** What hostileServer.mjs puts in every text, as the CLI must print it. */
const escaped = String.raw`<\u001b[2J\u001b]0;title\u0007\u001b]52;c;aGk=\u0007\u009b31m\rforged\b\u007f>`

/** Fails if `text` holds a character a terminal acts on (C0, DEL, C1), but those in `kept`. */
const assertInert = (text: string, what: string, kept = "\n") => {
  const raw = [...text].find((c) => (c < " " || (c >= "\x7f" && c <= "\x9f")) && !kept.includes(c))
  assert.isUndefined(raw, `${what} printed ${JSON.stringify(raw)} as itself: ${JSON.stringify(text)}`)
}

const ran = (args: ReadonlyArray<string>, options: Parameters<typeof runCli>[1] = {}) =>
  Effect.tap(runCli([...args, ...server], options), (r: Ran) =>
    Effect.sync(() => assert.strictEqual(r.code, 0, r.stderr))
  )

// Each check runs the CLI (a Node process loading the sources) a few times: the limit only catches a hang.
const TIMEOUT = 120_000

describe.concurrent("effect-mcp prints a server's text with its control characters escaped", () => {
  it.live(
    "tools, prompts and resources: names, descriptions and arguments",
    () =>
      Effect.gen(function* () {
        const tools = yield* ran(["tools"])
        assertInert(tools.stdout, "tools")
        assert.strictEqual(tools.stdout, `tool${escaped}  description${escaped} (arg${escaped})\n`)
        const prompts = yield* ran(["prompts"])
        assertInert(prompts.stdout, "prompts")
        assert.strictEqual(prompts.stdout, `prompt${escaped}  (arg${escaped}*)\n`)
        const resources = yield* ran(["resources"])
        assertInert(resources.stdout, "resources")
        assert.strictEqual(resources.stdout, `test://resource${escaped}  name${escaped} (text/plain)\n`)
        // --json: JSON.stringify leaves DEL and C1 as they are; they are escaped too, and the JSON is the same.
        const json = yield* ran(["tools", "--json"])
        assertInert(json.stdout, "tools --json")
        assert.include(JSON.stringify(JSON.parse(json.stdout)), "\u009b31m")
      }),
    TIMEOUT
  )

  it.live(
    "call, prompt and read: the results, their newlines and tabs kept; the progress line its own \\r only",
    () =>
      Effect.gen(function* () {
        const call = yield* ran(["call", "any", "{}"], { env: { EFFECT_MCP_PROGRESS: "always" } })
        assertInert(call.stdout, "call", "\n\t")
        assert.strictEqual(call.stdout, `result${escaped}\nline two\twith a tab\n`)
        // Each draw is `\r`, the line, then erase-to-the-end (`ESC[K`); the clear is `\r` and `ESC[K` alone.
        const draws = call.stderr.split("\x1b[K")
        assert.strictEqual(draws.pop(), "", JSON.stringify(call.stderr))
        assert.isAtLeast(draws.length, 2, JSON.stringify(call.stderr))
        for (const draw of draws) {
          assert.isTrue(draw.startsWith("\r"), JSON.stringify(call.stderr))
          assertInert(draw.slice(1), "the progress line")
        }
        // The line is cut to the width of a terminal (80 columns when there is none).
        assert.include(call.stderr, `] 1 ${escaped.slice(0, 30)}`)

        const prompt = yield* ran(["prompt", "any"])
        assertInert(prompt.stdout, "prompt")
        assert.strictEqual(prompt.stdout, `user: message${escaped}\n`)
        const read = yield* ran(["read", "test://any"])
        assertInert(read.stdout, "read")
        assert.strictEqual(read.stdout, `contents${escaped}\n`)
      }),
    TIMEOUT
  )

  it.live(
    "info and a server's error",
    () =>
      Effect.gen(function* () {
        const info = yield* ran(["info"])
        assertInert(info.stdout, "info")
        const lines = info.stdout.split("\n")
        assert.strictEqual(lines[0], `server${escaped} 1.0.0`)
        assert.strictEqual(lines[3], `instructions: first line${escaped}`)
        assert.strictEqual(lines[4], "second line")
        const failed = yield* runCli(["call", "fail", "{}", ...server])
        assert.strictEqual(failed.code, 4, failed.stderr)
        assertInert(failed.stderr, "the error line")
        assert.strictEqual(failed.stderr, `effect-mcp: server error -32602: bad${escaped}\n`)
      }),
    TIMEOUT
  )

  it.live(
    "watch: a log line, on one line (its newline shown as \\n), and the server's name it starts with",
    () =>
      Effect.gen(function* () {
        // The server logs when the first keepalive ping comes (a second in); Ctrl-C once the line is out.
        let stdout = ""
        const stopOnceLogged = (child: ChildProcess) =>
          child.stdout?.on("data", (chunk: string | Buffer) => {
            stdout += chunk.toString()
            if (stdout.includes("END\n")) child.kill("SIGINT")
          })
        const watched = yield* runCli(["watch", "--timeout", "1", ...server], { onSpawn: stopOnceLogged })
        assert.strictEqual(watched.code, 130, watched.stderr)
        assertInert(watched.stdout, "watch")
        assert.strictEqual(watched.stdout, `[warning] logger${escaped}: log${escaped}\\nEND\n`)
        assertInert(watched.stderr, "watch's stderr")
        assert.strictEqual(watched.stderr.split("\n")[0], `watching server${escaped}; Ctrl-C to stop`)
      }),
    TIMEOUT
  )
})
