/**
 * Where the generated wire schemas knowingly differ from a revision's
 * schema.json, as data: each row names the definition, the JSON pointer inside
 * it, the change and why. The generator applies every row to each revision
 * that has the definition, and stops if a row no longer applies there (the
 * upstream schema changed: decide again whether the row is still needed).
 */
import type { Node, Revision } from "./spec.ts"

/** The changes a row can make. */
type Change = "integer -> number" | "+ extensions"

export interface Deviation {
  readonly definition: string
  /** JSON pointer inside the definition, e.g. `/properties/content/additionalProperties`. */
  readonly pointer: string
  readonly change: Change
  readonly reason: string
  /** The last revision the row applies to, when later ones have what it adds. */
  readonly until?: string
}

export const deviations: ReadonlyArray<Deviation> = [
  {
    definition: "ElicitResult",
    pointer: "/properties/content/additionalProperties",
    change: "integer -> number",
    reason:
      "schema.json types a form answer `integer`, but the specification's TypeScript source (`string | number | " +
      'boolean | string[]`) and every SDK say `number`, and a form\'s NumberSchema (`type: "number"`) asks for ' +
      "fractions: an accepted 95.5 must decode"
  },
  {
    definition: "ClientCapabilities",
    pointer: "/properties",
    change: "+ extensions",
    until: "2025-11-25",
    reason:
      "capabilities are open objects in every revision (no `additionalProperties: false`), and extensions " +
      "(SEP-2133) are declared under `extensions` whatever the revision: MCP Apps hosts do so in `initialize` " +
      "(ext-apps, the official SDK 1.x's ClientCapabilities). A Struct without the key would drop the " +
      "declaration on decode, so it is a member here, shaped as the revision's `experimental` map. 2026-07-28 " +
      "names it itself"
  }
]

const changes: { readonly [C in Change]: (node: Node) => Node | undefined } = {
  "integer -> number": (node) => integerToNumber(node),
  "+ extensions": (node) => addExtensions(node as unknown as Readonly<Record<string, Node>>) as Node | undefined
}

/** A `properties` map with `extensions` beside `experimental`, shaped as it (undefined when it has one or no model). */
const addExtensions = (properties: Readonly<Record<string, Node>>): Readonly<Record<string, Node>> | undefined => {
  const experimental = properties["experimental"]
  if (properties["extensions"] !== undefined || experimental === undefined) return undefined
  return {
    ...properties,
    extensions: {
      ...experimental,
      description: "MCP extensions the client supports, by extension identifier, with their settings."
    }
  }
}

/** `node` with every `integer` type widened to `number` (undefined when it has none). */
const integerToNumber = (node: Node): Node | undefined => {
  let changed = false
  const visit = (n: Node): Node => {
    let out: Node = n
    if (n.type === "integer") out = { ...out, type: "number" }
    else if (Array.isArray(n.type) && n.type.includes("integer"))
      out = { ...out, type: n.type.map((t: string) => (t === "integer" ? "number" : t)) }
    if (out !== n) changed = true
    const members = (["anyOf", "oneOf", "allOf"] as const).filter((k) => n[k] !== undefined)
    for (const k of members) out = { ...out, [k]: n[k]!.map(visit) }
    if (n.items !== undefined) out = { ...out, items: visit(n.items) }
    if (typeof n.additionalProperties === "object")
      out = { ...out, additionalProperties: visit(n.additionalProperties) }
    if (n.properties !== undefined) {
      out = { ...out, properties: Object.fromEntries(Object.entries(n.properties).map(([k, v]) => [k, visit(v)])) }
    }
    return out
  }
  const result = visit(node)
  return changed ? result : undefined
}

const segments = (pointer: string): ReadonlyArray<string> => pointer.split("/").slice(1)

/** `node` with the node at `path` replaced by `f` of it (undefined when the path does not exist). */
const replaceAt = (node: unknown, path: ReadonlyArray<string>, f: (n: Node) => Node | undefined): unknown => {
  if (path.length === 0) return f(node as Node)
  if (typeof node !== "object" || node === null) return undefined
  const [head, ...rest] = path as [string, ...Array<string>]
  const child = (node as Record<string, unknown>)[head]
  if (child === undefined) return undefined
  const replaced = replaceAt(child, rest, f)
  if (replaced === undefined) return undefined
  return Array.isArray(node)
    ? node.map((c, i) => (String(i) === head ? replaced : c))
    : { ...(node as object), [head]: replaced }
}

/** Applies the table to a revision; returns it and a line per row applied, for the generator's report. */
export const applyDeviations = (rev: Revision): [Revision, ReadonlyArray<string>] => {
  const defs = new Map(rev.defs)
  const applied: Array<string> = []
  for (const row of deviations) {
    const node = defs.get(row.definition)
    if (node === undefined || (row.until !== undefined && rev.version > row.until)) continue
    const patched = replaceAt(node, segments(row.pointer), changes[row.change])
    if (patched === undefined) {
      throw new Error(`${rev.version} ${row.definition}${row.pointer}: deviation "${row.change}" no longer applies`)
    }
    defs.set(row.definition, patched as Node)
    applied.push(`${row.definition}${row.pointer}: ${row.change}`)
  }
  return [{ ...rev, defs }, applied]
}
