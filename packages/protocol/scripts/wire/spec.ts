/**
 * Reading one revision's normative JSON Schema: the definitions, the `$ref`
 * graph between them (cycles, dependency order), structural fingerprints for
 * de-duplication across revisions, and the object view that union ordering and
 * `allOf` merging need.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** The JSON Schema keywords the MCP schemas use; anything else fails generation loudly. */
const knownKeywords = new Set([
  "$ref",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "oneOf",
  "allOf",
  "const",
  "enum",
  "description",
  "format",
  "minimum",
  "maximum",
  "minItems",
  "maxItems"
])

export interface Node {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly properties?: Readonly<Record<string, Node>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: Node | boolean
  readonly items?: Node
  readonly anyOf?: ReadonlyArray<Node>
  readonly oneOf?: ReadonlyArray<Node>
  readonly allOf?: ReadonlyArray<Node>
  readonly const?: unknown
  readonly enum?: ReadonlyArray<unknown>
  readonly description?: string
  readonly format?: string
  readonly minimum?: number
  readonly maximum?: number
  readonly minItems?: number
  readonly maxItems?: number
}

export interface Revision {
  /** e.g. "2025-06-18" */
  readonly version: string
  /** e.g. "v2025_06_18" */
  readonly module: string
  readonly defs: ReadonlyMap<string, Node>
}

export const moduleName = (version: string): string => "v" + version.replaceAll("-", "_")

export const loadRevision = (specDir: string, version: string): Revision => {
  const raw = JSON.parse(fs.readFileSync(path.join(specDir, version, "schema.json"), "utf8"))
  const defs = (raw.$defs ?? raw.definitions) as Record<string, Node>
  for (const [name, node] of Object.entries(defs)) checkKeywords(node, name)
  return { version, module: moduleName(version), defs: new Map(Object.entries(defs)) }
}

const checkKeywords = (node: Node, at: string): void => {
  for (const key of Object.keys(node)) {
    if (!knownKeywords.has(key)) throw new Error(`${at}: unsupported JSON Schema keyword "${key}"`)
  }
  forEachChild(node, (child, key) => checkKeywords(child, `${at}/${key}`))
}

/** Visits the sub-schemas of a node (not the property-name maps themselves). */
export const forEachChild = (node: Node, f: (child: Node, key: string) => void): void => {
  for (const [key, child] of Object.entries(node.properties ?? {})) f(child, `properties/${key}`)
  if (typeof node.additionalProperties === "object") f(node.additionalProperties, "additionalProperties")
  if (node.items !== undefined) f(node.items, "items")
  for (const k of ["anyOf", "oneOf", "allOf"] as const) {
    for (const [i, child] of (node[k] ?? []).entries()) f(child, `${k}/${i}`)
  }
}

export const refName = (ref: string): string => ref.slice(ref.lastIndexOf("/") + 1)

export const refsOf = (node: Node, into: Set<string> = new Set()): Set<string> => {
  if (node.$ref !== undefined) into.add(refName(node.$ref))
  forEachChild(node, (child) => refsOf(child, into))
  return into
}

/** Definitions grouped into strongly connected components, dependencies first (Tarjan). */
export const components = (defs: ReadonlyMap<string, Node>): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const out: Array<Array<string>> = []
  let counter = 0
  const visit = (name: string): void => {
    index.set(name, counter)
    low.set(name, counter)
    counter++
    stack.push(name)
    onStack.add(name)
    for (const dep of [...refsOf(defs.get(name)!)].sort()) {
      if (!defs.has(dep)) throw new Error(`${name}: $ref to unknown definition ${dep}`)
      if (!index.has(dep)) {
        visit(dep)
        low.set(name, Math.min(low.get(name)!, low.get(dep)!))
      } else if (onStack.has(dep)) {
        low.set(name, Math.min(low.get(name)!, index.get(dep)!))
      }
    }
    if (low.get(name) === index.get(name)) {
      const scc: Array<string> = []
      let top: string
      do {
        top = stack.pop()!
        onStack.delete(top)
        scc.push(top)
      } while (top !== name)
      out.push(scc.sort())
    }
  }
  for (const name of [...defs.keys()].sort()) if (!index.has(name)) visit(name)
  return out
}

/** A definition's structure without its documentation, with refs reduced to names: equal fingerprints mean equal wire shapes. */
export const fingerprint = (node: Node): string => JSON.stringify(canonical(node))

const canonical = (node: Node): unknown => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(node).sort()) {
    if (key === "description") continue
    const value = (node as Record<string, unknown>)[key]
    if (key === "$ref") out[key] = refName(value as string)
    else if (key === "properties") {
      const props: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value as Record<string, Node>).sort(([a], [b]) => (a < b ? -1 : 1))) {
        props[k] = canonical(v)
      }
      out[key] = props
    } else if (key === "required") out[key] = [...(value as Array<string>)].sort()
    else if (key === "items" || (key === "additionalProperties" && typeof value === "object")) {
      out[key] = canonical(value as Node)
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf") out[key] = (value as Array<Node>).map(canonical)
    else out[key] = value
  }
  return out
}

/**
 * Names of `current`'s definitions that may be shared with `previous`: the
 * structure is identical and so is every definition it reaches.
 */
export const sharedWith = (current: Revision, previous: Revision | undefined): Set<string> => {
  const shared = new Set<string>()
  if (previous === undefined) return shared
  for (const [name, node] of current.defs) {
    const old = previous.defs.get(name)
    if (old !== undefined && fingerprint(old) === fingerprint(node)) shared.add(name)
  }
  // Drop any definition that reaches a changed one, until nothing changes.
  let changed = true
  while (changed) {
    changed = false
    for (const name of shared) {
      for (const dep of refsOf(current.defs.get(name)!)) {
        if (!shared.has(dep)) {
          shared.delete(name)
          changed = true
          break
        }
      }
    }
  }
  return shared
}

export interface ObjectView {
  readonly properties: ReadonlyMap<string, Node>
  readonly required: ReadonlySet<string>
  /** `additionalProperties: {}` / `true`: unknown keys are part of the value. */
  readonly open: boolean
  /** `additionalProperties: <schema>` */
  readonly rest: Node | undefined
}

/** Follows a chain of bare `$ref`s (a `description` alongside is documentation, not structure). */
export const deref = (defs: ReadonlyMap<string, Node>, node: Node): Node => {
  let current = node
  while (current.$ref !== undefined && Object.keys(current).every((k) => k === "$ref" || k === "description")) {
    current = defs.get(refName(current.$ref))!
  }
  return current
}

export const isOpen = (node: Node): boolean =>
  node.additionalProperties === true ||
  (typeof node.additionalProperties === "object" && Object.keys(node.additionalProperties).length === 0)

/**
 * The object a node describes, merging `allOf` members. Where several members
 * declare one property the last wins: in the MCP schemas a later member only
 * ever narrows an earlier one (e.g. `Error.code` to one literal code).
 */
export const objectView = (defs: ReadonlyMap<string, Node>, input: Node): ObjectView | undefined => {
  const node = deref(defs, input)
  if (node.allOf !== undefined) {
    const properties = new Map<string, Node>()
    const required = new Set<string>()
    let open = false
    let rest: Node | undefined
    for (const member of node.allOf) {
      const view = objectView(defs, member)
      if (view === undefined) return undefined
      for (const [k, v] of view.properties) {
        const before = properties.get(k)
        properties.set(
          k,
          v.description === undefined && before?.description !== undefined
            ? { ...v, description: before.description }
            : v
        )
      }
      for (const k of view.required) required.add(k)
      open ||= view.open
      rest ??= view.rest
    }
    return { properties, required, open, rest }
  }
  if (node.type !== "object" && node.properties === undefined) return undefined
  const rest =
    typeof node.additionalProperties === "object" && !isOpen(node) ? (node.additionalProperties as Node) : undefined
  return {
    properties: new Map(Object.entries(node.properties ?? {})),
    required: new Set(node.required ?? []),
    open: isOpen(node),
    rest
  }
}

/**
 * Effect decodes a union with the first member that matches and drops keys a
 * member does not declare. JSON Schema `anyOf` has no order, so a member that
 * would swallow a richer later member (its required keys are a subset, it is
 * not open, no literal tells them apart) must be tried after it. Returns the
 * member indexes in decoding order: spec order wherever that is lossless.
 */
export const unionOrder = (defs: ReadonlyMap<string, Node>, members: ReadonlyArray<Node>): ReadonlyArray<number> => {
  const views = members.map((m) => objectView(defs, m))
  const before = members.map(() => new Set<number>())
  for (let i = 0; i < members.length; i++) {
    for (let j = i + 1; j < members.length; j++) {
      const a = views[i]
      const b = views[j]
      if (a !== undefined && b !== undefined && swallows(defs, a, b)) before[i]!.add(j)
    }
  }
  // Each member goes as early as spec order allows, right after the last member it would swallow.
  const order: Array<number> = []
  const placed = new Set<number>()
  const pending: Array<number> = []
  const ready = (i: number) => [...before[i]!].every((j) => placed.has(j))
  const place = (i: number) => {
    order.push(i)
    placed.add(i)
  }
  for (let i = 0; i < members.length; i++) {
    if (!ready(i)) {
      pending.push(i)
      continue
    }
    place(i)
    for (let k = 0; k < pending.length; k++) {
      if (ready(pending[k]!)) {
        place(pending.splice(k, 1)[0]!)
        k = -1
      }
    }
  }
  return pending.length === 0 ? order : members.map((_, i) => i)
}

const swallows = (defs: ReadonlyMap<string, Node>, a: ObjectView, b: ObjectView): boolean => {
  if (a.open || a.rest !== undefined) return false
  for (const key of a.required) if (!b.required.has(key)) return false
  for (const [key, node] of a.properties) {
    const mine = literalsOf(deref(defs, node))
    if (mine === undefined) continue
    const other = b.properties.get(key)
    if (other === undefined && !a.required.has(key)) continue
    const theirs = other === undefined ? undefined : literalsOf(deref(defs, other))
    if (theirs === undefined || theirs.some((v) => !mine.includes(v))) return false
  }
  return [...b.properties.keys()].some((key) => !a.properties.has(key))
}

const literalsOf = (node: Node): ReadonlyArray<unknown> | undefined =>
  node.const !== undefined ? [node.const] : node.enum

/**
 * The draft-07 exports (and the 2025-11-25 tasks messages) drop `_meta` from a
 * message's inline `params` because the TypeScript source overrides `params`
 * of `Request` / `Notification`; but every request and notification may carry
 * `params._meta` (progress tokens ride there). Put the base's `_meta` back so
 * decoding keeps it. Returns the revision and the definitions it patched.
 */
export const inheritMeta = (rev: Revision): [Revision, ReadonlyArray<string>] => {
  const base = (kind: "Request" | "Notification"): Node | undefined =>
    rev.defs.get(kind)?.properties?.["params"]?.properties?.["_meta"] ??
    rev.defs.get(`${kind}Params`)?.properties?.["_meta"]
  const defs = new Map(rev.defs)
  const patched: Array<string> = []
  for (const [name, node] of rev.defs) {
    const params = node.properties?.["params"]
    const kind = name.endsWith("Request") ? "Request" : name.endsWith("Notification") ? "Notification" : undefined
    if (
      kind === undefined ||
      params === undefined ||
      params.$ref !== undefined ||
      node.properties?.["method"]?.const === undefined
    ) {
      continue
    }
    const meta = base(kind)
    if (meta === undefined || params.properties?.["_meta"] !== undefined) continue
    defs.set(name, {
      ...node,
      properties: { ...node.properties, params: { ...params, properties: { _meta: meta, ...params.properties } } }
    })
    patched.push(name)
  }
  return [{ ...rev, defs }, patched]
}
