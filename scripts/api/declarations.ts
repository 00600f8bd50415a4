/**
 * Declarations (`npm run api`, `scripts/apiReport.ts`): from the text of a `.d.ts` as `tsc` emits it to the
 * statements the report shows. Every comment is left out (a doc edit is not an API change; a union member a
 * comment moved to a line of its own goes back to `} | {`); `.ts` specifiers read `.js` (as `npm run build`
 * leaves them); blank lines and trailing blanks are dropped; the statements are sorted: imports, then
 * re-exports, then declarations by name (overloads keep their order), so moving a declaration changes
 * nothing.
 */
import { plainSpecifiers } from "../build.ts"

// The end of the string literal (or template literal) that starts at `start`, past its closing quote.
const endOfString = (text: string, start: number): number => {
  const quote = text[start]
  let i = start + 1
  while (i < text.length) {
    const c = text[i]
    if (c === "\\") i += 2
    else if (c === quote) return i + 1
    else if (c === "\n" && quote !== "`") return i
    else i++
  }
  return i
}

/** `text` without its comments (`/* *\/`, `/** *\/`, `//`); string and template literals kept as they are. */
export const stripComments = (text: string): string => {
  const parts: Array<string> = []
  let from = 0
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === '"' || c === "'" || c === "`") i = endOfString(text, i)
    else if (c === "/" && text[i + 1] === "*") {
      parts.push(text.slice(from, i))
      const before = text[i - 1]
      const end = text.indexOf("*/", i + 2)
      i = from = end < 0 ? text.length : end + 2
      // `(/** doc */ a: A)` reads `(a: A)`: the blanks after a comment that follows a blank or a bracket go too.
      if (before === undefined || /[\s([{<,]/.test(before)) {
        while (text[i] === " " || text[i] === "\t") i++
        from = i
      }
    } else if (c === "/" && text[i + 1] === "/") {
      parts.push(text.slice(from, i))
      const end = text.indexOf("\n", i + 2)
      i = from = end < 0 ? text.length : end
    } else i++
  }
  parts.push(text.slice(from))
  return parts.join("")
}

// How much deeper in brackets the line ends than it starts (strings skipped).
const depthChange = (line: string): number => {
  let depth = 0
  let i = 0
  while (i < line.length) {
    const c = line[i]
    if (c === '"' || c === "'" || c === "`") {
      i = endOfString(line, i)
      continue
    }
    if (c === "{" || c === "(" || c === "[") depth++
    else if (c === "}" || c === ")" || c === "]") depth--
    i++
  }
  return depth
}

// A line that goes on with the type before it: tsc prints a union member after a comment on a line of its own.
const continuation = /^\s*(?:\||&|\?|:|=>|\.|\[|extends\b)/

/**
 * The top-level statements of declarations without comments: a statement ends on a line that closes
 * every bracket it opened and ends with `;`, or with `}` when the next line does not go on with it (a
 * `| {` union member, say). Blank lines and trailing blanks are dropped, a statement's first line
 * starts at its first character, and a union member that a comment moved to a line of its own goes back
 * where tsc prints it without the comment (`} | {`).
 */
export const splitStatements = (text: string): ReadonlyArray<string> => {
  const lines = text
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "")
  const statements: Array<string> = []
  let current: Array<string> = []
  let depth = 0
  lines.forEach((line, index) => {
    // tsc prints `} | {` on one line, and a `| {` after a comment on a line of its own: one form for both.
    if (current.length > 0 && /^\s*[|&]\s/.test(line)) current[current.length - 1] += ` ${line.trim()}`
    else current.push(current.length === 0 ? line.trimStart() : line)
    depth += depthChange(line)
    if (depth > 0) return
    const next = lines[index + 1]
    if (line.endsWith(";") || (line.endsWith("}") && (next === undefined || !continuation.test(next)))) {
      statements.push(current.join("\n"))
      current = []
      depth = 0
    }
  })
  if (current.length > 0) statements.push(current.join("\n"))
  return statements
}

const declaration =
  /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:(?:const\s+enum|const|let|var|function|class|interface|type|namespace|module|enum)\s+([\w$]+)|(global)\b)/

/**
 * Where a statement sorts: imports (0), then re-exports and export lists (1), then declarations by name (2),
 * anything else last (3).
 */
export const sortKey = (statement: string): readonly [number, string] => {
  if (statement.startsWith("import ")) return [0, statement]
  const named = declaration.exec(statement)
  if (named !== null) return [2, named[1] ?? named[2]!]
  if (statement.startsWith("export ")) return [1, statement]
  return [3, statement]
}

/** Code-unit order, as the report sorts names and files. */
export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The declarations of one `.d.ts` as the report shows them: no comments, `.js` specifiers, no blank
 * lines, no `export {};` marker, statements sorted (stably: overloads keep their order).
 */
export const normalizedStatements = (dts: string): ReadonlyArray<string> => {
  const statements = splitStatements(plainSpecifiers(stripComments(dts))).filter((s) => s !== "export {};")
  const keyed = statements.map((statement) => ({ statement, key: sortKey(statement) }))
  keyed.sort((a, b) => a.key[0] - b.key[0] || compare(a.key[1], b.key[1]))
  return keyed.map(({ statement }) => statement)
}

/** {@link normalizedStatements}, one text. */
export const normalizeDeclarations = (dts: string): string => normalizedStatements(dts).join("\n")
