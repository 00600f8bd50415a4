import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TerminalText from "../src/internal/terminalText.ts"
import * as Render from "../src/Render.ts"

/** Screen clear, window title (OSC ended by BEL), C1 CSI, carriage return, backspace, DEL. */
const hostile = "<\x1b[2J\x1b]0;t\x07\u009b1m\rx\b\x7f>"
const escaped = String.raw`<\u001b[2J\u001b]0;t\u0007\u009b1m\rx\b\u007f>`

describe("TerminalText", () => {
  it.effect("line: every control character escaped, newlines and tabs too; other text as it is", () =>
    Effect.sync(() => {
      assert.strictEqual(TerminalText.line(hostile), escaped)
      assert.strictEqual(TerminalText.line("a\nb\tc\0"), String.raw`a\nb\tc\u0000`)
      assert.strictEqual(TerminalText.line("héllo wörld \u00a0 日本 \\x1b"), "héllo wörld \u00a0 日本 \\x1b")
    })
  )

  it.effect("lines: newlines and tabs kept, a \\r\\n line end a newline, a lone \\r escaped", () =>
    Effect.sync(() => {
      assert.strictEqual(TerminalText.lines(`a\r\nb\tc\n${hostile}`), `a\nb\tc\n${escaped}`)
      assert.strictEqual(TerminalText.lines("a\rb\r"), String.raw`a\rb\r`)
    })
  )
})

describe("TerminalText.json", () => {
  it.effect(
    "what JSON.stringify leaves raw (DEL, C1, bidi overrides) escaped, and the JSON parses to the same value",
    () =>
      Effect.sync(() => {
        const value = { name: `a\u009b31m\u202eevil\u2066b\x7f${hostile}`, n: 1 }
        const text = TerminalText.json(value)
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters a terminal acts on are the point.
        assert.notMatch(text, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
        assert.deepStrictEqual(JSON.parse(text), value)
        assert.include(text, String.raw`\u009b31m\u202eevil\u2066b\u007f`)
        assert.deepStrictEqual(JSON.parse(TerminalText.json(value, 2)), value)
      })
  )

  it.effect("line: the bidi overrides and isolates shown, other Unicode as it is", () =>
    Effect.sync(() => {
      assert.strictEqual(TerminalText.line("abc\u202edef\u2069 עברית"), String.raw`abc\u202edef\u2069` + " עברית")
    })
  )
})

describe("Render of a server's text", () => {
  it.effect("info: name, capabilities and instructions escaped, the instructions' lines kept", () =>
    Effect.sync(() => {
      assert.strictEqual(
        Render.info({
          serverInfo: { name: `s${hostile}`, version: "1" },
          revision: "2025-11-25",
          capabilities: { tools: {}, [`x${hostile}`]: {} },
          instructions: `one${hostile}\ntwo`
        }),
        [
          `s${escaped} 1`,
          "revision: 2025-11-25",
          `capabilities: tools, x${escaped}`,
          `instructions: one${escaped}\ntwo`
        ].join("\n")
      )
      assert.strictEqual(
        Render.info({ serverInfo: undefined, revision: "2025-11-25", capabilities: {}, instructions: undefined }),
        "(unnamed server)\nrevision: 2025-11-25\ncapabilities: (none)"
      )
    })
  )

  it.effect("tools and prompts: names, descriptions and arguments escaped, the padding measured on what is shown", () =>
    Effect.sync(() => {
      assert.strictEqual(
        Render.tools([
          {
            name: "a\x1b",
            description: `d${hostile}`,
            inputSchema: { type: "object", properties: { [`p\r`]: {} }, required: ["p\r"] }
          },
          { name: "bb", inputSchema: { type: "object" } }
        ]),
        `a\\u001b  d${escaped} (p\\r*)\nbb`
      )
      assert.strictEqual(Render.prompts([{ name: "p\u009b", arguments: [{ name: "\b" }] }]), String.raw`p\u009b  (\b)`)
    })
  )

  it.effect("results, log lines and progress messages escaped; JSON's DEL and C1 characters too", () =>
    Effect.sync(() => {
      assert.strictEqual(
        Render.toolResult({
          content: [
            { type: "text", text: `t${hostile}\nsecond` },
            { type: "resource_link", uri: "test://\x1b", name: "\x07" }
          ]
        }),
        `t${escaped}\nsecond\n[resource link test://\\u001b (\\u0007)]`
      )
      // JSON.stringify escapes C0 controls itself and leaves DEL and C1 as they are: escaped the same way, still JSON.
      const structured = Render.toolResult({ content: [], structuredContent: { s: "\x1b\x7f\u009b" } })
      assert.strictEqual(structured, '{\n  "s": "\\u001b\\u007f\\u009b"\n}')
      assert.deepStrictEqual(JSON.parse(structured), { s: "\x1b\x7f\u009b" })
      assert.strictEqual(Render.readResult({ contents: [{ uri: "test://a", text: `r${hostile}` }] }), `r${escaped}`)
      assert.strictEqual(
        Render.logMessage({ level: "info", logger: "l\x1b", data: `m${hostile}\nforged` }),
        `[info] l\\u001b: m${escaped}\\nforged`
      )
      assert.strictEqual(Render.logMessage({ level: "info", data: { s: "\u009b" } }), String.raw`[info] {"s":"\u009b"}`)
      assert.strictEqual(Render.progressBar({ progress: 1, message: `m${hostile}` }, 2), `[??] 1 m${escaped}`)
    })
  )
})
