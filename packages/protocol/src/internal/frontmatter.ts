/**
 * The YAML frontmatter of a `SKILL.md`: the block between a leading `---`
 * line and the next one. Skills write their frontmatter as plain YAML, so this
 * reads the subset they use (block mappings and sequences, lists of maps,
 * plain and one-line quoted scalars, one-line flow sequences, `|`/`>` block
 * scalars with chomping indicators, comments) exactly as a YAML 1.2 parser
 * with the core schema does, and refuses everything else (anchors, aliases,
 * tags, flow maps, multi-line quoted or flow values, indentation indicators,
 * complex or non-string keys, values JSON cannot hold). Peers compare the
 * frontmatter field by field with their own YAML reading, so a value read
 * differently is worse than a refusal: anything not certain is refused.
 * `test/domain/SkillsFrontmatter.test.ts` checks both against the `yaml`
 * package. Written by hand because that package would add about 97 KB
 * minified (30 KB gzipped) to a Worker serving skills; this is about 7 KB.
 */

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** A parse failure: what is wrong, and on which line of the frontmatter. */
export class FrontmatterError {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const opening = /^---[ \t]*\r?\n/
const closing = /\r?\n---[ \t]*(?:\r?\n|$)/

/**
 * Splits a `SKILL.md` into its frontmatter YAML and the body after it;
 * undefined without frontmatter. The YAML keeps the line break of its last
 * line, which a `|+` block scalar there keeps.
 */
export const split = (text: string): { readonly yaml: string; readonly body: string } | undefined => {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const start = opening.exec(source)
  if (start === null) return undefined
  const rest = source.slice(start[0].length)
  // An empty block: the closing line follows at once.
  if (/^---[ \t]*(?:\r?\n|$)/.test(rest)) return { yaml: "", body: rest.replace(/^---[ \t]*(?:\r?\n|$)/, "") }
  const end = closing.exec(rest)
  if (end === null) return undefined
  const lineBreak = end[0].startsWith("\r") ? 2 : 1
  return { yaml: rest.slice(0, end.index + lineBreak), body: rest.slice(end.index + end[0].length) }
}

interface Line {
  readonly number: number
  /** Leading spaces (tabs never indent YAML). */
  readonly indent: number
  /** The line after its indentation, trailing white space kept (block scalars keep it). */
  readonly text: string
}

// A declaration, not an arrow, so that TypeScript narrows after a call.
function fail(line: number, message: string): never {
  throw new FrontmatterError(`line ${line}: ${message}`)
}

const maxDepth = 64
const isItem = (text: string) => /^-(?:[ \t]|$)/.test(text)
/** Blank, or a comment: skipped outside block scalars. */
const isSkippable = (line: Line) => line.text === "" || line.text.startsWith("#")
const startsComment = /^[ \t]*#/
const trimEnd = (text: string) => text.replace(/[ \t]+$/, "")
const trimStart = (text: string) => text.replace(/^[ \t]+/, "")

/** Drops a ` #` comment from plain text (a `#` glued to text is text). */
const stripComment = (text: string): { readonly text: string; readonly commented: boolean } => {
  const match = /(?:^|[ \t])#/.exec(text)
  return match === null
    ? { text: trimEnd(text), commented: false }
    : { text: trimEnd(text.slice(0, match.index)), commented: true }
}

/** A plain scalar typed by YAML 1.2's core schema (the `yaml` package's reading, ints by `parseInt`). */
const resolvePlain = (text: string, line: number): Json => {
  if (/^(?:~|[Nn]ull|NULL)?$/.test(text)) return null
  if (/^(?:[Tt]rue|TRUE)$/.test(text)) return true
  if (/^(?:[Ff]alse|FALSE)$/.test(text)) return false
  let number: number | undefined
  if (/^[-+]?[0-9]+$/.test(text)) number = Number.parseInt(text, 10)
  else if (/^0o[0-7]+$/.test(text)) number = Number.parseInt(text.slice(2), 8)
  else if (/^0x[0-9a-fA-F]+$/.test(text)) number = Number.parseInt(text.slice(2), 16)
  else if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(text)) number = Number.parseFloat(text)
  else if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(text)) number = Number.NaN
  if (number === undefined) return text
  return Number.isFinite(number) ? number : fail(line, `${text} has no JSON value; quote it`)
}

/** Refuses what cannot begin a plain scalar in our subset (indicators YAML reads otherwise). */
const checkPlainStart = (text: string, line: number, flow: boolean): void => {
  const c = text[0]!
  if ("&*!".includes(c)) fail(line, "anchors, aliases and tags are not supported")
  if (c === "{") fail(line, "flow mappings are not supported")
  if ("|>'\"%@`#,[]}".includes(c)) fail(line, `a plain value cannot start with "${c}"; quote it`)
  if ("-?:".includes(c) && (text.length === 1 || (flow ? /[ \t,[\]{}]/ : /[ \t]/).test(text[1]!))) {
    fail(line, `"${c} " cannot start a value here; quote it`)
  }
}

const checkPlain = (text: string, line: number): void => {
  if (/:(?:[ \t]|$)/.test(text)) fail(line, `a plain value cannot hold ": "; quote it`)
}

const escapes: Record<string, string> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  "\t": "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\u0085",
  _: "\u00a0",
  L: "\u2028",
  P: "\u2029"
}
const hexWidth: Record<string, number> = { x: 2, u: 4, U: 8 }

/** A one-line quoted scalar starting at `start`: its value and the index after its closing quote. */
const readQuoted = (text: string, start: number, line: number): { readonly value: string; readonly end: number } => {
  const quote = text[start]
  let value = ""
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!
    if (c === quote) {
      if (quote === "'" && text[i + 1] === "'") {
        value += "'"
        i++
        continue
      }
      return { value, end: i + 1 }
    }
    if (c !== "\\" || quote === "'") {
      value += c
      continue
    }
    const code = text[i + 1] ?? ""
    const width = hexWidth[code]
    if (escapes[code] !== undefined) value += escapes[code]
    else if (width !== undefined && /^[0-9a-fA-F]+$/.test(text.slice(i + 2, i + 2 + width))) {
      const point = Number.parseInt(text.slice(i + 2, i + 2 + width), 16)
      if (point > 0x10ffff) fail(line, `invalid escape \\${code}`)
      value += String.fromCodePoint(point)
      i += width
    } else fail(line, `invalid escape \\${code}`)
    i++
  }
  return fail(line, "a quoted string must end on its line (multi-line quoted strings are not supported)")
}

/** After a complete value only white space or a comment may follow on its line. */
const expectEnd = (rest: string, line: number): void => {
  if (trimStart(rest) !== "" && !/^[ \t]+#/.test(rest)) fail(line, "unexpected text after the value")
}

const skipWhite = (text: string, i: number) => i + (text.slice(i).length - trimStart(text.slice(i)).length)

/** A one-line flow sequence starting at `start` (its `[`): the list and the index after its `]`. */
const readFlow = (
  text: string,
  start: number,
  line: number,
  depth: number
): { readonly value: Json; readonly end: number } => {
  if (depth > maxDepth) fail(line, "nested too deeply")
  const items: Array<Json> = []
  let i = skipWhite(text, start + 1)
  while (text[i] !== "]") {
    const c = text[i]
    if (c === undefined || c === "#") fail(line, "a flow sequence must end on its line")
    if (c === "[") {
      const inner = readFlow(text, i, line, depth + 1)
      items.push(inner.value)
      i = inner.end
    } else if (c === '"' || c === "'") {
      const quoted = readQuoted(text, i, line)
      items.push(quoted.value)
      i = quoted.end
    } else {
      checkPlainStart(text.slice(i), line, true)
      // A plain item ends at a flow indicator, a comment, or a `:` that would make it a key.
      const end = /[,[\]{}]|[ \t]#|:(?=[ \t,[\]{}]|$)/.exec(text.slice(i))
      const stop = end === null ? text.length : i + end.index
      if (text[stop] === ":") fail(line, "mappings inside flow sequences are not supported")
      items.push(resolvePlain(trimEnd(text.slice(i, stop)), line))
      i = stop
    }
    i = skipWhite(text, i)
    if (text[i] === ",") i = skipWhite(text, i + 1)
    else if (text[i] !== "]") fail(line, `unexpected "${text[i] ?? "end of line"}" in a flow sequence`)
    else break
    if (text[i] === ",") fail(line, "empty entry in a flow sequence")
  }
  return { value: items, end: i + 1 }
}

/** `key: rest` on a line, or undefined when the line is not a mapping entry. */
const keyOf = (text: string, line: number): { readonly key: string; readonly rest: string } | undefined => {
  let key: string
  let after: string
  if (text[0] === '"' || text[0] === "'") {
    const quoted = readQuoted(text, 0, line)
    key = quoted.value
    after = trimStart(text.slice(quoted.end))
  } else {
    // Flow collections as keys (and lines that are flow values) are not entries of this subset.
    if (text === "" || "[{#".includes(text[0]!)) return undefined
    const match = /:(?:[ \t]|$)/.exec(text)
    if (match === null) return undefined
    const raw = trimEnd(text.slice(0, match.index))
    // A comment before the colon ends the line first.
    if (raw === "" || /[ \t]#/.test(raw)) return undefined
    checkPlainStart(raw, line, false)
    if (typeof resolvePlain(raw, line) !== "string") fail(line, `the key ${raw} is not a string; quote it`)
    key = raw
    after = text.slice(match.index)
  }
  if (!/^:(?:[ \t]|$)/.test(after)) return undefined
  if (key === "__proto__") fail(line, "the key __proto__ is not supported")
  return { key, rest: trimStart(after.slice(1)) }
}

/** Folds or keeps the lines of a block scalar (indentation removed, empty lines as ""), then chomps. */
const blockText = (lines: ReadonlyArray<string>, folded: boolean, chomping: string): string => {
  let out = ""
  let empties = 0
  let started = false
  let previousMoreIndented = false
  for (const text of lines) {
    if (text === "") {
      empties++
      continue
    }
    const moreIndented = text[0] === " " || text[0] === "\t"
    // Folding joins two normal lines with a space, or with the empty lines between them;
    // line breaks around more-indented lines are kept.
    if (!started) out += "\n".repeat(empties)
    else if (folded && !moreIndented && !previousMoreIndented) out += empties === 0 ? " " : "\n".repeat(empties)
    else out += "\n".repeat(empties + 1)
    out += text
    started = true
    empties = 0
    previousMoreIndented = moreIndented
  }
  if (chomping === "+") return out + "\n".repeat(empties + (started ? 1 : 0))
  return chomping === "" && started ? `${out}\n` : out
}

class Parser {
  private index = 0
  private readonly lines: Array<Line>
  constructor(lines: Array<Line>) {
    this.lines = lines
  }

  document(): { readonly [key: string]: Json } {
    const first = this.peek()
    if (first === undefined) return {}
    if (isItem(first.text) || keyOf(first.text, first.number) === undefined) {
      fail(first.number, "the frontmatter is not a mapping")
    }
    const value = this.mapping(first.indent, 0)
    const extra = this.peek()
    if (extra !== undefined) fail(extra.number, "unexpected indentation")
    return value
  }

  /** The next line that is not blank or a comment. */
  private peek(): Line | undefined {
    for (; this.index < this.lines.length; this.index++) {
      const line = this.lines[this.index]!
      // YAML allows tabs before some comments and on some blank lines, but where is subtle: none are read.
      if (line.text.startsWith("\t")) fail(line.number, "tabs may not indent YAML")
      if (!isSkippable(line)) return line
    }
    return undefined
  }

  private mapping(indent: number, depth: number): { readonly [key: string]: Json } {
    if (depth > maxDepth) fail(this.lines[this.index]!.number, "nested too deeply")
    const out: Record<string, Json> = {}
    for (let line = this.peek(); line !== undefined && line.indent >= indent; line = this.peek()) {
      if (line.indent > indent) fail(line.number, "unexpected indentation")
      const entry = keyOf(line.text, line.number)
      if (entry === undefined) fail(line.number, `expected "key: value"`)
      if (Object.hasOwn(out, entry.key)) fail(line.number, `duplicate key ${entry.key}`)
      this.index++
      out[entry.key] = this.value(entry.rest, line, indent, depth + 1, true)
    }
    return out
  }

  private sequence(indent: number, depth: number): Array<Json> {
    if (depth > maxDepth) fail(this.lines[this.index]!.number, "nested too deeply")
    const items: Array<Json> = []
    for (let line = this.peek(); line !== undefined && line.indent >= indent; line = this.peek()) {
      if (line.indent > indent) fail(line.number, "expected a list item")
      // A list at its key's indent ends at the next key.
      if (!isItem(line.text)) break
      const rest = trimStart(line.text.slice(1))
      // `- key: value` and `- - item` open a collection whose further lines align with its first.
      if (rest !== "" && (isItem(rest) || (!startsComment.test(rest) && keyOf(rest, line.number) !== undefined))) {
        const column = line.indent + line.text.length - rest.length
        if (line.text.slice(1, column - line.indent).includes("\t")) fail(line.number, "tabs may not indent YAML")
        this.lines[this.index] = { number: line.number, indent: column, text: rest }
        items.push(isItem(rest) ? this.sequence(column, depth + 1) : this.mapping(column, depth + 1))
        continue
      }
      this.index++
      items.push(this.value(rest, line, indent, depth + 1, false))
    }
    return items
  }

  /** The value after `key:` or `-` (`rest`, comments included): inline, a block scalar, or on the lines below. */
  private value(rest: string, line: Line, parent: number, depth: number, sameIndentList: boolean): Json {
    if (rest === "" || startsComment.test(rest)) {
      const from = this.index
      const next = this.peek()
      if (next === undefined) return null
      // A list may sit at the indent of its key; anything else belongs to the value only when deeper.
      if (sameIndentList && next.indent === parent && isItem(next.text)) return this.sequence(parent, depth)
      if (next.indent <= parent) return null
      if (isItem(next.text)) return this.sequence(next.indent, depth)
      if (keyOf(next.text, next.number) !== undefined) return this.mapping(next.indent, depth)
      // The `yaml` package misreads some of these (`a:\n#x\n b\nc:` fails, `-\n#x\n b\n- c` is ["b - c"]).
      if (this.lines.slice(from, this.index).some((skipped) => skipped.text !== "")) {
        fail(next.number, "a comment between a key and its value is not supported")
      }
      this.index++
      return this.value(next.text, next, parent, depth, false)
    }
    const c = rest[0]!
    if (c === "|" || c === ">") return this.blockScalar(rest, line, parent)
    if (c === '"' || c === "'") {
      const quoted = readQuoted(rest, 0, line.number)
      expectEnd(rest.slice(quoted.end), line.number)
      return quoted.value
    }
    if (c === "[") {
      const flow = readFlow(rest, 0, line.number, depth)
      expectEnd(rest.slice(flow.end), line.number)
      return flow.value
    }
    checkPlainStart(rest, line.number, false)
    return this.plain(rest, line, parent)
  }

  /** A plain scalar, continued on deeper lines: single line breaks fold to spaces, blank lines to breaks. */
  private plain(first: string, line: Line, parent: number): Json {
    let { commented, text: value } = stripComment(first)
    checkPlain(value, line.number)
    let blanks = 0
    while (this.index < this.lines.length) {
      const next = this.lines[this.index]!
      if (next.text.startsWith("\t")) fail(next.number, "tabs may not indent YAML")
      if (next.text === "") {
        blanks++
        this.index++
        continue
      }
      if (next.indent <= parent || next.text.startsWith("#")) break
      if (commented) fail(next.number, "a comment ends a plain value; quote a value that goes on")
      const part = stripComment(next.text)
      checkPlain(part.text, next.number)
      value += blanks === 0 ? ` ${part.text}` : "\n".repeat(blanks) + part.text
      commented = part.commented
      blanks = 0
      this.index++
    }
    return resolvePlain(value, line.number)
  }

  /** A `|` or `>` block scalar: its lines are taken raw, so `#` and blank lines in it are text. */
  private blockScalar(header: string, line: Line, parent: number): string {
    const match = /^([|>])([-+]?)(?:[ \t]+#.*|[ \t]*)$/.exec(header)
    if (match === null) {
      fail(
        line.number,
        /^[|>][-+]?[0-9]/.test(header) ? "indentation indicators are not supported" : "invalid block scalar header"
      )
    }
    const texts: Array<string> = []
    let indent: number | undefined
    let leading = 0
    for (; this.index < this.lines.length; this.index++) {
      const next = this.lines[this.index]!
      const blank = next.text === ""
      if (indent === undefined && !blank && next.indent > parent) {
        // YAML requires an indentation indicator there, which this subset does not read.
        if (leading > next.indent) fail(next.number, "a leading blank line is indented more than the block")
        indent = next.indent
      }
      if (indent !== undefined && next.indent >= indent) texts.push(" ".repeat(next.indent - indent) + next.text)
      else if (blank) {
        if (indent === undefined) leading = Math.max(leading, next.indent)
        texts.push("")
      } else if (next.text.startsWith("\t")) fail(next.number, "tabs may not indent YAML")
      else break
    }
    return blockText(texts, match[1] === ">", match[2]!)
  }
}

/** Parses frontmatter YAML into a JSON object; throws `FrontmatterError` on anything outside the subset. */
export const parse = (yaml: string): { readonly [key: string]: Json } => {
  const raws = yaml.split(/\r?\n/)
  // The break ending the last line opens no line of its own.
  if (raws.at(-1) === "") raws.pop()
  const lines = raws.map((raw, i): Line => {
    // YAML reads a lone CR as a line break and the `yaml` package as text: neither is guessed at.
    if (raw.includes("\r")) fail(i + 1, "a carriage return outside a CRLF line break is not supported")
    const indent = raw.length - raw.replace(/^ +/, "").length
    return { number: i + 1, indent, text: raw.slice(indent) }
  })
  return new Parser(lines).document()
}
