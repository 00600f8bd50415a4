/**
 * JSON Schema node -> Effect Schema source text. One function per JSON Schema
 * construct; `Emitter` carries what an expression depends on besides the node
 * (the revision's definitions and the cycle the current definition is in).
 */
import { type Node, objectView, type Revision, refName, unionOrder } from "./spec.ts"

const identifierRe = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const key = (name: string): string => (identifierRe.test(name) ? name : JSON.stringify(name))
// Non-ASCII characters escaped: an all-ASCII module is a one-byte string to V8
// and to Node's compile cache, which hashes every module's source on each load.
const str = (s: string): string =>
  JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
const pad = (indent: number): string => "  ".repeat(indent)

export class Emitter {
  readonly rev: Revision
  /** Definitions of the current strongly connected component, when it is a real cycle. */
  readonly cycle: ReadonlySet<string>
  /** Unions whose decoding order differs from spec order, for the generator's report. */
  readonly reordered: Array<string>

  constructor(rev: Revision, cycle: ReadonlySet<string>, reordered: Array<string>) {
    this.rev = rev
    this.cycle = cycle
    this.reordered = reordered
  }

  /** The schema expression of a node; `at` names the location for the report. */
  expr(node: Node, at: string, indent = 0): string {
    if (node.$ref !== undefined) return this.ref(node, at)
    if (node.allOf !== undefined) return this.object(node, at, indent)
    const members = node.anyOf ?? node.oneOf
    if (members !== undefined) return this.union(members, at, indent)
    if (node.const !== undefined) return `Schema.Literal(${JSON.stringify(node.const)})`
    if (node.enum !== undefined) {
      return node.enum.length === 1
        ? `Schema.Literal(${JSON.stringify(node.enum[0])})`
        : `Schema.Literals(${JSON.stringify(node.enum)})`
    }
    if (Array.isArray(node.type)) {
      return `Schema.Union([${node.type.map((type: string) => this.typed({ ...node, type }, at, indent)).join(", ")}])`
    }
    if (node.type === undefined && node.properties === undefined) return "Schema.Unknown"
    return this.typed(node, at, indent)
  }

  private ref(node: Node, at: string): string {
    const structural = Object.keys(node).filter((k) => k !== "$ref" && k !== "description")
    if (structural.length > 0) throw new Error(`${at}: $ref alongside ${structural.join(", ")} is not supported`)
    const name = refName(node.$ref!)
    return this.cycle.has(name) ? `Schema.suspend((): Schema.Codec<${name}> => ${name}())` : `${name}()`
  }

  private typed(node: Node, at: string, indent: number): string {
    switch (node.type) {
      case "string":
        // `format` (uri, byte, uri-template) is kept as documentation, not validated: peers in the
        // wild send relative URIs and unpadded base64, and the spec types these as plain strings.
        return node.format === undefined ? "Schema.String" : `Schema.String.annotate({ format: ${str(node.format)} })`
      case "number":
        // JSON has no NaN/Infinity, so a JSON number is a finite number.
        return withChecks("Schema.Finite", numberChecks(node))
      case "integer":
        return withChecks("Schema.Int", numberChecks(node))
      case "boolean":
        return "Schema.Boolean"
      case "null":
        return "Schema.Null"
      case "array": {
        const item = node.items === undefined ? "Schema.Unknown" : this.expr(node.items, `${at}[]`, indent)
        return withChecks(`Schema.Array(${item})`, arrayChecks(node))
      }
      case "object":
      case undefined:
        return this.object(node, at, indent)
      default:
        throw new Error(`${at}: unsupported type ${String(node.type)}`)
    }
  }

  private union(members: ReadonlyArray<Node>, at: string, indent: number): string {
    if (members.length === 1) return this.expr(members[0]!, at, indent)
    const order = unionOrder(this.rev.defs, members)
    if (order.some((m, i) => m !== i)) {
      const names = (ixs: ReadonlyArray<number>) => ixs.map((i) => memberName(members[i]!, i)).join(", ")
      this.reordered.push(`${at}: [${names(members.map((_, i) => i))}] decoded as [${names(order)}]`)
    }
    const parts = order.map((i) => this.expr(members[i]!, `${at}|${i}`, indent + 1))
    return multiline("Schema.Union([", parts, "])", indent)
  }

  private object(node: Node, at: string, indent: number): string {
    const view = objectView(this.rev.defs, node)
    if (view === undefined) throw new Error(`${at}: allOf of non-object members is not supported`)
    const restValue = view.open ? "Schema.Unknown" : view.rest && this.expr(view.rest, `${at}{}`, indent)
    if (view.properties.size === 0) {
      // No declared keys: a map, or any object (an empty Struct would drop every key, and accept non-objects).
      return `Schema.Record(Schema.String, ${restValue ?? "Schema.Unknown"})`
    }
    const fields = [...view.properties].map(([name, prop]) => {
      let field = this.expr(prop, `${at}.${name}`, indent + 1)
      if (!view.required.has(name)) field = `Schema.optionalKey(${field})`
      return `${key(name)}: ${field}`
    })
    const struct = multiline("Schema.Struct({", fields, "})", indent)
    return restValue === undefined
      ? struct
      : `Schema.StructWithRest(${struct}, [Schema.Record(Schema.String, ${restValue})])`
  }

  /**
   * The TypeScript type of a node, for definitions in a cycle: their consts need
   * an explicit `Schema.Codec<T>` annotation because TS cannot infer a type that
   * refers to itself.
   */
  tsType(node: Node): string {
    if (node.$ref !== undefined) return refName(node.$ref)
    const members = node.anyOf ?? node.oneOf
    if (members !== undefined) return members.map((m) => paren(this.tsType(m))).join(" | ")
    if (node.const !== undefined) return JSON.stringify(node.const)
    if (node.enum !== undefined) return node.enum.map((v) => JSON.stringify(v)).join(" | ")
    if (Array.isArray(node.type)) return node.type.map((type: string) => this.tsType({ ...node, type })).join(" | ")
    switch (node.type) {
      case "string":
        return "string"
      case "number":
      case "integer":
        return "number"
      case "boolean":
        return "boolean"
      case "null":
        return "null"
      case "array":
        return `ReadonlyArray<${node.items === undefined ? "unknown" : this.tsType(node.items)}>`
    }
    const view = objectView(this.rev.defs, node)
    if (view === undefined) return "unknown"
    const fields = [...view.properties].map(
      ([name, prop]) => `readonly ${key(name)}${view.required.has(name) ? "" : "?"}: ${this.tsType(prop)}`
    )
    if (view.open || view.rest !== undefined || node.properties === undefined) {
      fields.push(`readonly [x: string]: ${view.rest === undefined ? "unknown" : this.tsType(view.rest)}`)
    }
    return `{ ${fields.join("; ")} }`
  }
}

const paren = (t: string): string => (t.includes(" | ") ? `(${t})` : t)

const memberName = (node: Node, i: number): string => (node.$ref !== undefined ? refName(node.$ref) : `#${i}`)

const multiline = (open: string, parts: ReadonlyArray<string>, close: string, indent: number): string =>
  parts.length === 0
    ? open + close
    : `${open}\n${parts.map((p) => pad(indent + 1) + p).join(",\n")}\n${pad(indent)}${close}`

const withChecks = (expr: string, checks: ReadonlyArray<string>): string =>
  checks.length === 0 ? expr : `${expr}.check(${checks.join(", ")})`

const numberChecks = (node: Node): ReadonlyArray<string> => {
  const { minimum, maximum } = node
  if (minimum !== undefined && maximum !== undefined)
    return [`Schema.isBetween({ minimum: ${minimum}, maximum: ${maximum} })`]
  if (minimum !== undefined) return [`Schema.isGreaterThanOrEqualTo(${minimum})`]
  if (maximum !== undefined) return [`Schema.isLessThanOrEqualTo(${maximum})`]
  return []
}

const arrayChecks = (node: Node): ReadonlyArray<string> => [
  ...(node.minItems === undefined ? [] : [`Schema.isMinLength(${node.minItems})`]),
  ...(node.maxItems === undefined ? [] : [`Schema.isMaxLength(${node.maxItems})`])
]

/**
 * One definition: a memoized builder (`lazy`, see generate-wire.ts) whose
 * references to other definitions are calls, and, for a definition in a
 * cycle, the type its annotation needs.
 */
export const emitDefinition = (
  emitter: Emitter,
  name: string,
  node: Node
): { readonly type: string | undefined; readonly value: string } => {
  const body = `${emitter.expr(node, name)}.annotate({ identifier: ${str(name)} })`
  if (emitter.cycle.has(name)) {
    return {
      type: `export type ${name} = ${emitter.tsType(node)}\n`,
      value: `export const ${name}: () => Schema.Codec<${name}> = lazy(() => ${body})\n`
    }
  }
  return { type: undefined, value: `export const ${name} = lazy(() => ${body})\n` }
}

/** Whether a definition is emitted as `StructWithRest` (its fields then live under `.schema.fields`). */
export const isStructWithRest = (rev: Revision, node: Node): boolean => {
  const view = objectView(rev.defs, node)
  return view !== undefined && view.properties.size > 0 && (view.open || view.rest !== undefined)
}
