/**
 * The YAML frontmatter of a `SKILL.md`: the block between a leading `---`
 * line and the next one. Skills write their frontmatter as plain YAML
 * mappings (strings, numbers, booleans, nested maps, lists of scalars), so
 * this reads that subset with YAML 1.2 core-schema typing and refuses the
 * rest (anchors, tags, flow maps, multi-line scalars other than `|`/`>`):
 * a skill whose frontmatter cannot be read exactly is never trusted.
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

/** Splits a `SKILL.md` into its frontmatter YAML and the body after it; undefined without frontmatter. */
export const split = (text: string): { readonly yaml: string; readonly body: string } | undefined => {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const start = opening.exec(source)
  if (start === null) return undefined
  const rest = source.slice(start[0].length)
  // An empty block: the closing line follows at once.
  if (/^---[ \t]*(?:\r?\n|$)/.test(rest)) return { yaml: "", body: rest.replace(/^---[ \t]*(?:\r?\n|$)/, "") }
  const end = closing.exec(rest)
  if (end === null) return undefined
  return { yaml: rest.slice(0, end.index), body: rest.slice(end.index + end[0].length) }
}

interface Line {
  readonly indent: number
  readonly text: string
  readonly number: number
}

const stripComment = (text: string): string => {
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote !== undefined) {
      if (c === quote) quote = undefined
    } else if (c === '"' || c === "'") quote = c
    else if (c === "#" && (i === 0 || text[i - 1] === " " || text[i - 1] === "\t")) return text.slice(0, i).trimEnd()
  }
  return text.trimEnd()
}

/** A plain or quoted scalar, typed as YAML 1.2's core schema does. */
const scalar = (raw: string, line: number): Json => {
  const text = raw.trim()
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) throw new FrontmatterError(`line ${line}: unterminated string`)
    try {
      return JSON.parse(text) as string
    } catch {
      throw new FrontmatterError(`line ${line}: invalid double-quoted string`)
    }
  }
  if (text.startsWith("'")) {
    if (!text.endsWith("'") || text.length < 2) throw new FrontmatterError(`line ${line}: unterminated string`)
    return text.slice(1, -1).replaceAll("''", "'")
  }
  if (/^[&*!{|>%@`]/.test(text)) throw new FrontmatterError(`line ${line}: unsupported YAML: ${text.slice(0, 20)}`)
  if (text.startsWith("[")) {
    if (!text.endsWith("]")) throw new FrontmatterError(`line ${line}: unterminated flow sequence`)
    const inner = text.slice(1, -1).trim()
    return inner === "" ? [] : inner.split(",").map((item) => scalar(item, line))
  }
  if (text === "" || text === "~" || /^(null|Null|NULL)$/.test(text)) return null
  if (/^(true|True|TRUE)$/.test(text)) return true
  if (/^(false|False|FALSE)$/.test(text)) return false
  if (/^[-+]?[0-9]+$/.test(text)) return Number.parseInt(text, 10)
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text)) return Number.parseFloat(text)
  return text
}

const keyOf = (text: string, line: number): { readonly key: string; readonly rest: string } | undefined => {
  const match = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^"'#:\s][^:#]*?)[ \t]*:(?:[ \t]+(.*))?$/.exec(text)
  if (match === null) return undefined
  const key = scalar(match[1]!, line)
  return { key: String(key), rest: match[2] ?? "" }
}

class Parser {
  private index = 0
  private readonly lines: ReadonlyArray<Line>
  constructor(lines: ReadonlyArray<Line>) {
    this.lines = lines
  }

  parse(): { readonly [key: string]: Json } {
    if (this.lines.length === 0) return {}
    const value = this.block(this.lines[0]!.indent)
    if (this.index < this.lines.length) {
      throw new FrontmatterError(`line ${this.lines[this.index]!.number}: unexpected indentation`)
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new FrontmatterError("the frontmatter is not a mapping")
    }
    return value as { readonly [key: string]: Json }
  }

  private block(indent: number): Json {
    const first = this.lines[this.index]!
    return first.text.startsWith("- ") || first.text === "-" ? this.sequence(indent) : this.mapping(indent)
  }

  private sequence(indent: number): Json {
    const items: Array<Json> = []
    while (this.index < this.lines.length) {
      const line = this.lines[this.index]!
      if (line.indent < indent) break
      if (line.indent > indent || !(line.text.startsWith("- ") || line.text === "-")) {
        throw new FrontmatterError(`line ${line.number}: expected a list item`)
      }
      this.index++
      items.push(this.valueAfter(line.text.slice(1), line, indent))
    }
    return items
  }

  private mapping(indent: number): Json {
    const out: Record<string, Json> = {}
    while (this.index < this.lines.length) {
      const line = this.lines[this.index]!
      if (line.indent < indent) break
      if (line.indent > indent) throw new FrontmatterError(`line ${line.number}: unexpected indentation`)
      const entry = keyOf(line.text, line.number)
      if (entry === undefined) throw new FrontmatterError(`line ${line.number}: expected "key: value"`)
      if (Object.hasOwn(out, entry.key)) throw new FrontmatterError(`line ${line.number}: duplicate key ${entry.key}`)
      this.index++
      out[entry.key] = this.valueAfter(entry.rest, line, indent)
    }
    return out
  }

  /** The value after `key:` or `-`: inline, a block scalar, or a nested block. */
  private valueAfter(rest: string, line: Line, indent: number): Json {
    const inline = rest.trim()
    if (inline === "|" || inline === ">" || inline === "|-" || inline === ">-") return this.blockScalar(inline, indent)
    if (inline !== "") return scalar(inline, line.number)
    const next = this.lines[this.index]
    // A nested block is indented deeper, or is a list at the same indent as a key.
    if (next !== undefined && (next.indent > indent || (next.indent === indent && next.text.startsWith("- ")))) {
      return this.block(next.indent)
    }
    return null
  }

  private blockScalar(style: string, indent: number): string {
    const parts: Array<string> = []
    let depth: number | undefined
    while (this.index < this.lines.length) {
      const line = this.lines[this.index]!
      if (line.indent <= indent) break
      depth ??= line.indent
      parts.push(" ".repeat(Math.max(0, line.indent - depth)) + line.text)
      this.index++
    }
    const joined = style.startsWith("|") ? parts.join("\n") : parts.join(" ")
    return style.endsWith("-") ? joined : `${joined}\n`
  }
}

/** Parses frontmatter YAML into a JSON object; throws `FrontmatterError` on anything outside the subset. */
export const parse = (yaml: string): { readonly [key: string]: Json } => {
  const lines: Array<Line> = []
  yaml.split(/\r?\n/).forEach((raw, i) => {
    if (/^\s*\t/.test(raw)) throw new FrontmatterError(`line ${i + 1}: tabs may not indent YAML`)
    const text = stripComment(raw)
    if (text.trim() === "") return
    const indent = text.length - text.trimStart().length
    lines.push({ indent, text: text.trim(), number: i + 1 })
  })
  return new Parser(lines).parse()
}
