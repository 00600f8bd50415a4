/**
 * SKILL.md frontmatter against YAML 1.2 itself. Peers compare a skill's
 * frontmatter field by field with their own reading of it, so every input
 * the reader accepts must read exactly as the `yaml` package reads it (core
 * schema), with LF or CRLF line ends, and what the subset leaves out must be
 * refused rather than read some other way.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as YAML from "yaml"
import * as Frontmatter from "../../src/internal/frontmatter.ts"

/** Reads `yaml` as the frontmatter of a whole SKILL.md, as a server and a client do. */
const read = (yaml: string, eol = "\n") => {
  const parts = Frontmatter.split(`---${eol}${yaml.replaceAll("\n", eol)}---${eol}body${eol}`)
  if (parts === undefined) throw new Error("no frontmatter")
  return Frontmatter.parse(parts.yaml)
}

const refused = (yaml: string): boolean => {
  try {
    read(yaml)
    return false
  } catch (error) {
    return error instanceof Frontmatter.FrontmatterError
  }
}

/** Accepted inputs and what YAML 1.2 reads them as. */
const accepted: ReadonlyArray<readonly [name: string, yaml: string, json: unknown]> = [
  // The four inputs that came back wrong (the official SDK then refused our skills).
  ["list item of a map", "authors:\n  - name: Ada\n", { authors: [{ name: "Ada" }] }],
  ["blank line in |", "d: |\n  first\n\n  second\n", { d: "first\n\nsecond\n" }],
  ["# line in |", "d: |\n  Steps:\n  # not a comment\n  done\n", { d: "Steps:\n# not a comment\ndone\n" }],
  ["paragraphs in >", "d: >\n  one\n  two\n\n  three\n", { d: "one two\nthree\n" }],
  // Lists of maps and of lists.
  [
    "maps with several keys",
    "a:\n  - name: Ada\n    role: x\n  -   name: B\n      tags: [t]\n",
    {
      a: [
        { name: "Ada", role: "x" },
        { name: "B", tags: ["t"] }
      ]
    }
  ],
  [
    "list at its key's indent",
    "a:\n- name: Ada\n  role: x\n- b\nc: 1\n",
    { a: [{ name: "Ada", role: "x" }, "b"], c: 1 }
  ],
  ["list in a list item", "a:\n  - - x\n    - y\n  - z\n", { a: [["x", "y"], "z"] }],
  ["list in a map in a list", "a:\n  - k:\n    - x\n    j: 1\n", { a: [{ k: ["x"], j: 1 }] }],
  ["items on their own lines", "a:\n  -\n    b: 1\n  - \n  - ~\n", { a: [{ b: 1 }, null, null] }],
  ["nested maps", "m:\n  n:\n    o: 1\n  p: x\nq: 2\n", { m: { n: { o: 1 }, p: "x" }, q: 2 }],
  ["lists of scalars", "l:\n  - a\n  - 1\n  - true\n  - 'q'\n  - \"r\"\n", { l: ["a", 1, true, "q", "r"] }],
  ["tab after -", "a:\n-\tb\n", { a: ["b"] }],
  ["indented document", "  a: 1\n  b: 2\n", { a: 1, b: 2 }],
  // Block scalars: chomping, blank lines, more-indented lines, comments around them.
  [
    "chomping indicators",
    "a: |-\n  x\n\nb: |+\n  x\n\nc: >-\n  x\n  y\n\nd: >+\n  x\n\ne: |\n  x\n\n\nf: >\n  x\n",
    { a: "x", b: "x\n\n", c: "x y", d: "x\n\n", e: "x\n", f: "x\n" }
  ],
  ["|+ keeps blank lines before the closing ---", "a: |+\n  x\n\n", { a: "x\n\n" }],
  ["empty blocks", "a: |\nb: |+\n\nc: |-\nd: 1\n", { a: "", b: "\n", c: "", d: 1 }],
  ["leading blank line", "a: |\n\n  x\nb: >\n\n  y\n", { a: "\nx\n", b: "\ny\n" }],
  ["more-indented lines in >", "d: >\n  one\n    two\n  three\n\n  four\n", { d: "one\n  two\nthree\nfour\n" }],
  ["blank lines around more-indented >", "d: >\n  a\n\n    b\n\n  c\n  \td\n", { d: "a\n\n  b\n\nc\n\td\n" }],
  ["trailing spaces kept in |", "a: |\n  x  \n     \n  y\n", { a: "x  \n   \ny\n" }],
  ["spaces-only line in >", "a: >\n  x\n    \n  y\n", { a: "x\n  \ny\n" }],
  ["tab after the indent of |", "a: |\n  \tcode\n  x\n", { a: "\tcode\nx\n" }],
  ["deeper content of |", "a: |\n    x\n      y\n    z\n", { a: "x\n  y\nz\n" }],
  ["header comments", "a: | # note\n  x\nb: >- # n\n  y\n", { a: "x\n", b: "y" }],
  ["comments after a block", "a: |\n  x\n # c\n# d\n\nb: 1\n", { a: "x\n", b: 1 }],
  ["blocks in lists", "a:\n- |\n x\n- >-\n  y\n  z\n- k: |\n    v\n", { a: ["x\n", "y z", { k: "v\n" }] }],
  // Flow sequences on one line.
  [
    "flow sequences",
    "a: [x, \"a, b\", 'c]', 1, 0x1f, null, [n, []], ]\nb: []\nc: [ a b , a:b, http://x ] # c\n",
    { a: ["x", "a, b", "c]", 1, 31, null, ["n", []]], b: [], c: ["a b", "a:b", "http://x"] }
  ],
  // Quoted scalars and keys.
  [
    "quoted strings",
    'a: "say \\"hi\\" # now"\nb: \'it\'\'s # not\'\nc: "\\x41\\u00e9\\U0001F600\\t\\/\\\\"\nd: "" # empty\ne: \'\\n\'\n',
    { a: 'say "hi" # now', b: "it's # not", c: "A\u00e9\u{1F600}\t/\\", d: "", e: "\\n" }
  ],
  ["quoted keys", '"a b": 1\n\'c: d\': 2\n"1": x\n', { "a b": 1, "c: d": 2, "1": "x" }],
  // Plain scalars.
  [
    "core schema",
    "a: 1\nb: -2\nc: +3\nd: 0o17\ne: 0x1F\nf: 1.5\ng: .5\nh: 1e3\ni: -1.5E-2\nj: 007\nk: true\nl: False\nm: TRUE\nn: null\no: Null\np: ~\nq:\nr: yes\ns: on\nt: 0b1\nu: 1_000\nv: 0O7\nw: 1.\nx: '1'\ny: 12345678901234567890\nz: -0x1\n",
    {
      a: 1,
      b: -2,
      c: 3,
      d: 15,
      e: 31,
      f: 1.5,
      g: 0.5,
      h: 1000,
      i: -0.015,
      j: 7,
      k: true,
      l: false,
      m: true,
      n: null,
      o: null,
      p: null,
      q: null,
      r: "yes",
      s: "on",
      t: "0b1",
      u: "1_000",
      v: "0O7",
      w: 1,
      x: "1",
      // Beyond 2^53 a YAML integer is the nearest double, as in JSON.
      y: 12345678901234567000,
      z: "-0x1"
    }
  ],
  [
    "plain text",
    'a: a#b\nb: x # comment\nc: http://x.y/z?q=1#f\nd: -x\ne: :x\nf: ?x\ng: a, b [c] {d}\nh: it\'s "so"\ni: caf\u00e9 \u2615\nallowed-tools: Read\n-k: 1\n',
    {
      a: "a#b",
      b: "x",
      c: "http://x.y/z?q=1#f",
      d: "-x",
      e: ":x",
      f: "?x",
      g: "a, b [c] {d}",
      h: 'it\'s "so"',
      i: "caf\u00e9 \u2615",
      "allowed-tools": "Read",
      "-k": 1
    }
  ],
  ["multi-line plain", "a: one\n  two\n\n  three\n   - four\nb: x\n", { a: "one two\nthree - four", b: "x" }],
  ["plain on the next line", 'a:\n  one\n  two\nb:\n  "q"\n', { a: "one two", b: "q" }],
  ["trailing spaces and tabs", "a: b   \nc:   \nd: 'q'  \ne: [x]\t\n", { a: "b", c: null, d: "q", e: ["x"] }],
  ["comments", "# top\na: 1 # c\n\n  # indented\nb: # c\n  c: 2\nd: #c\n", { a: 1, b: { c: 2 }, d: null }],
  ["tabs as separators", "a:\tb\nc:\t[x]\nd :\t1\n", { a: "b", c: ["x"], d: 1 }],
  ["space before the colon", "a : b\n'c' : d\n", { a: "b", c: "d" }]
]

/** Inputs outside the subset (or not YAML): refused, never read some other way. */
const refusedInputs: ReadonlyArray<readonly [name: string, yaml: string]> = [
  ["anchor", "a: &x 1\n"],
  ["alias", "a: *x\n"],
  ["tag", "a: !!str 1\n"],
  ["anchored key", "&x a: 1\n"],
  ["flow map", "a: {b: 1}\n"],
  ["map in a flow sequence", "a: [b: 1]\n"],
  ["quoted key in a flow sequence", 'a: ["b": 1]\n'],
  ["multi-line quoted", 'a: "x\n  y"\n'],
  ["multi-line flow", "a: [x,\n  y]\n"],
  ["empty flow entry", "a: [x,,y]\n"],
  ["text after a flow sequence", "a: [x] y\n"],
  ["indentation indicator", "a: |2\n   x\n"],
  ["more-indented leading blank line", "a: |\n    \n  x\n"],
  ["bad block header", "a: |x\n  y\n"],
  [": in a plain value", "a: Use when: asked\n"],
  ["- after a key", "a: - x\n"],
  ["complex key", "? a\n: b\n"],
  ["number key", "1: a\n"],
  ["null key", "null: a\n"],
  ["boolean key", "true: a\n"],
  ["duplicate key", "a: 1\na: 2\n"],
  ["__proto__ key", "__proto__: 1\n"],
  [".inf", "a: .inf\n"],
  [".nan", "a: .nan\n"],
  ["a float JSON cannot hold", "a: 1e999\n"],
  ["tab indentation", "a:\n\tb: 1\n"],
  ["tab indenting a block", "a: |\n\tx\n"],
  ["tab before a comment", "a: 1\n\t# c\n"],
  ["tab on a blank line", "a: x\n \t\n b\n"],
  ["tab before a compact map", "a:\n-\tb: 1\n"],
  ["text after a comment", "a: one # c\n  two\n"],
  ["lone CR", "a: x\ry\n"],
  ["document end", "a: 1\n...\n"],
  ["list at the top", "- a\n"],
  ["scalar at the top", "a\n"],
  ["unterminated quote", 'a: "x\n'],
  ["invalid escape", 'a: "\\q"\n'],
  ["text after a quote", 'a: "x" y\n'],
  ["no space after a quoted key", '"a":b\n'],
  ["inconsistent indentation", "a:\n  b: 1\n c: 2\n"],
  ["list item after an entry", "a: 1\n- x\n"],
  ["key continuing a plain value", "a: 1\n  b: 2\n"],
  ["block not deeper than its compact map", "a:\n- b: |\n  x\n"],
  ["reserved indicators", "a: @x\n"],
  ["backquote", "a: `x`\n"],
  ["directive-like value", "a: %x\n"],
  ["comment before a value on its own line", "a:\n#x\n b\nc: 1\n"],
  ["nesting too deep", `a: ${"[".repeat(100)}${"]".repeat(100)}\n`]
]

describe("SKILL.md frontmatter as YAML 1.2", () => {
  it("reads every accepted input as the yaml package does, with LF and CRLF line ends", () => {
    // Every mismatch at once, as readings side by side.
    const mismatches: Array<string> = []
    const outcome = (f: () => unknown) => {
      try {
        return JSON.stringify(f())
      } catch (error) {
        return `error ${(error as { message: string }).message}`
      }
    }
    for (const [name, yaml, json] of accepted) {
      const expected = JSON.stringify(json)
      const readings = {
        yaml: outcome(() => YAML.parse(yaml, { schema: "core" })),
        lf: outcome(() => read(yaml)),
        crlf: outcome(() => read(yaml, "\r\n"))
      }
      for (const [by, got] of Object.entries(readings)) {
        if (got !== expected) mismatches.push(`${name} (${by}): ${got}, expected ${expected}`)
      }
    }
    assert.deepStrictEqual(mismatches, [])
    // Where the yaml package reads an empty document as null, a frontmatter is an empty map.
    assert.deepStrictEqual(read(""), {})
    assert.deepStrictEqual(read("# only a comment\n\n"), {})
  })

  it("refuses what the subset leaves out", () => {
    for (const [name, yaml] of refusedInputs) assert.isTrue(refused(yaml), name)
  })

  it("reads lines made of YAML's pieces as the yaml package does, or refuses them", () => {
    // Indicators, scalars, block headers, comments and white space, in any order and indentation: most are not
    // YAML, and of those read, none may read differently.
    const pieces = ["a:", "b: ", "- ", "-", "k: v", "|", ">", "|-", "|+", ">-", ">+", "x", "y z", "# c", " #", "#"]
    pieces.push("'q''s'", '"d\\"q"', "[x, 'y']", "[]", "1", "0x1f", "~", "true", "", " ", "\t", ":", "{a: 1}", "&a")
    pieces.push("?", "1.5", '"', "'", ",", "]", "c:", "- d:", "-\t", "e: |", "f: >", ": ", "  ")
    const line = fc
      .tuple(fc.nat({ max: 5 }), fc.array(fc.constantFrom(...pieces), { maxLength: 3 }))
      .map(([indent, parts]) => " ".repeat(indent) + parts.join(""))
    const document = fc.array(line, { minLength: 1, maxLength: 7 }).map((lines) => `${lines.join("\n")}\n`)
    fc.assert(
      fc.property(document, (yaml) => {
        let ours: unknown
        try {
          ours = read(yaml)
        } catch (error) {
          return error instanceof Frontmatter.FrontmatterError
        }
        const reference = YAML.parse(yaml, { schema: "core" }) ?? {}
        assert.deepStrictEqual(ours, reference, JSON.stringify(yaml))
      }),
      { numRuns: 5000, seed: 2026 }
    )
  })
})
