/**
 * The documentation as the docs checks read it: which files are docs (the
 * README and every guide in `docs/`, not the generated `docs/api`), and the
 * fenced code blocks of a markdown text with their info strings and lines.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "../support/ServerProcess.ts"

/** A fenced code block. */
export interface Block {
  /** The markdown file, relative to the repository root. */
  readonly file: string
  /** The line of its opening fence (1-based). */
  readonly line: number
  /** The first word of the info string (`ts`, `console`, `text`...); empty for a block without one. */
  readonly lang: string
  /** The other words of the info string (`text output`: `["output"]`). */
  readonly tags: ReadonlyArray<string>
  /** Its text, every line ending with a newline. */
  readonly code: string
}

/** The fenced blocks of `markdown` (fences at the start of a line, as every doc here writes them). */
export const blocks = (file: string, markdown: string): ReadonlyArray<Block> => {
  const found: Array<Block> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    // A fence is three backticks or more, its info string holds none (CommonMark), the closing fence the same.
    const open = /^(```+)([^`\s]*)([^`]*)$/.exec(lines[i]!)
    if (open === null) continue
    const end = lines.findIndex((line, j) => j > i && line === open[1])
    if (end === -1) throw new Error(`${file}:${i + 1}: a code block that never ends`)
    const body = lines.slice(i + 1, end)
    found.push({
      file,
      line: i + 1,
      lang: open[2]!,
      tags: open[3]!
        .trim()
        .split(/\s+/)
        .filter((tag) => tag !== ""),
      code: body.map((line) => `${line}\n`).join("")
    })
    i = end
  }
  return found
}

/** The docs: the README and the guides in `docs/`, relative to the repository root. */
export const docFiles = (): ReadonlyArray<string> => [
  "README.md",
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`)
]

/** The blocks of a doc of the repository. */
export const blocksOf = (file: string): ReadonlyArray<Block> =>
  blocks(file, fs.readFileSync(path.join(root, file), "utf8"))
