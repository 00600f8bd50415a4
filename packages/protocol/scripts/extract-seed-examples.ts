/**
 * Extracts every complete JSON-RPC message quoted in the seed specification
 * texts into packages/protocol/spec/seed-examples.json, with the revision each
 * one is quoted for and where it was found (`<file>:<line of the block>`).
 * The seed texts are not kept in the repository (they are the documents the
 * project started from); the tests read the extracted messages only.
 *
 *   node packages/protocol/scripts/extract-seed-examples.ts <folder of seed .txt files>
 *
 * Examples with `...` or comments are not JSON and drop out.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const versions = new Set(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
const revisionLine = /Protocol Revision\W*(\d{4}-\d{2}-\d{2})/
const pathHeading = /^File: \/docs\/specification\/(\d{4}-\d{2}-\d{2})\//

interface Example {
  readonly at: string
  readonly version: string
  readonly message: Readonly<Record<string, unknown>>
}

const markerOf = (line: string): string | undefined => {
  const found = line.match(revisionLine)?.[1] ?? line.match(pathHeading)?.[1]
  return found !== undefined && versions.has(found) ? found : undefined
}

const parse = (dir: string, file: string): Array<Example> => {
  const lines = fs.readFileSync(path.join(dir, file), "utf8").split("\n")
  // A block before any revision marker belongs to the revision the document declares first.
  let version = lines.map(markerOf).find((v) => v !== undefined)
  const out: Array<Example> = []
  let block: Array<string> | undefined
  let start = 0
  lines.forEach((line, i) => {
    if (line.trim().startsWith("```")) {
      if (block === undefined) {
        block = []
        start = i + 1
        return
      }
      const text = block.join("\n")
      block = undefined
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return
      }
      for (const message of Array.isArray(json) ? json : [json]) {
        if (typeof message === "object" && message !== null && message.jsonrpc === "2.0" && version !== undefined) {
          out.push({ at: `${file}:${start}`, version, message })
        }
      }
      return
    }
    if (block !== undefined) {
      block.push(line)
      return
    }
    version = markerOf(line) ?? version
  })
  return out
}

const dir = process.argv[2]
if (dir === undefined) {
  process.stderr.write("usage: extract-seed-examples.ts <folder of seed .txt files>\n")
  process.exit(2)
}
const examples = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".txt"))
  .sort()
  .flatMap((f) => parse(dir, f))
const out = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../spec/seed-examples.json")
fs.writeFileSync(out, `${JSON.stringify(examples, null, 2)}\n`)
console.log(`${examples.length} messages -> ${out}`)
