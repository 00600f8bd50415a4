/**
 * Arbitrary values of a definition of a revision's normative schema.json,
 * generated straight from the JSON Schema (independent of any hand-written or
 * generated Effect schema), for the wire-subset-of-domain property tests.
 *
 * Extra keys are generated only where the spec says an object is open
 * (`additionalProperties`, objects declaring no properties such as `MetaObject`,
 * and every `*MetaObject`, which the spec documents as extending MetaObject);
 * they are prefixed `x_` so they never collide with a declared property.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ProtocolVersion } from "@effect-mcp/protocol/ProtocolVersion"
import * as fc from "fast-check"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
export const specDir = path.join(repoRoot, "packages/protocol/spec")

export interface JsonSchema {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: JsonSchema | boolean
  readonly items?: JsonSchema
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly const?: unknown
  readonly enum?: ReadonlyArray<unknown>
  readonly format?: string
  readonly minimum?: number
  readonly maximum?: number
}

export interface SpecDocument {
  readonly revision: ProtocolVersion
  /** The parsed schema.json. */
  readonly raw: unknown
  /** `definitions` (draft-07 revisions) or `$defs` (2020-12 revisions). */
  readonly defsKey: "definitions" | "$defs"
  readonly defs: Readonly<Record<string, JsonSchema>>
}

export const loadSpec = (revision: ProtocolVersion): SpecDocument => {
  const raw = JSON.parse(fs.readFileSync(path.join(specDir, revision, "schema.json"), "utf8"))
  const defsKey = raw.$defs !== undefined ? "$defs" : "definitions"
  return { revision, raw, defsKey, defs: raw[defsKey] }
}

const refName = (ref: string): string => ref.slice(ref.lastIndexOf("/") + 1)

/** A node reached by a path, and the JSON pointer (into schema.json) of that node. */
export interface Located {
  readonly node: JsonSchema
  readonly pointer: string
  /** The definition the node was reached through last (to spot `*MetaObject`s). */
  readonly defName: string
}

const escapePointer = (segment: string): string => segment.replaceAll("~", "~0").replaceAll("/", "~1")

const deref = (doc: SpecDocument, at: Located): Located | undefined => {
  let current = at
  while (current.node.$ref !== undefined) {
    const name = refName(current.node.$ref)
    const node = doc.defs[name]
    if (node === undefined) return undefined
    current = { node, pointer: `#/${doc.defsKey}/${escapePointer(name)}`, defName: name }
  }
  return current
}

/**
 * Follows `[definition, property, ...]`, dereferencing `$ref`s and looking into
 * `allOf`/`anyOf` branches; `undefined` when the revision has no such path.
 */
export const locate = (doc: SpecDocument, specPath: ReadonlyArray<string>): Located | undefined => {
  const [name, ...rest] = specPath
  if (name === undefined) return undefined
  const root = doc.defs[name]
  if (root === undefined) return undefined
  let current: Located | undefined = { node: root, pointer: `#/${doc.defsKey}/${escapePointer(name)}`, defName: name }
  for (const key of rest) {
    current = current === undefined ? undefined : step(doc, current, key)
    if (current === undefined) return undefined
  }
  return current
}

const step = (doc: SpecDocument, at: Located, key: string): Located | undefined => {
  const here = deref(doc, at)
  if (here === undefined) return undefined
  const property = here.node.properties?.[key]
  if (property !== undefined) {
    return { node: property, pointer: `${here.pointer}/properties/${escapePointer(key)}`, defName: here.defName }
  }
  const branches = [
    ...(here.node.allOf ?? []).map((node, i) => ({
      node,
      pointer: `${here.pointer}/allOf/${i}`,
      defName: here.defName
    })),
    ...(here.node.anyOf ?? []).map((node, i) => ({
      node,
      pointer: `${here.pointer}/anyOf/${i}`,
      defName: here.defName
    }))
  ]
  for (const branch of branches) {
    const found = step(doc, branch, key)
    if (found !== undefined) return found
  }
  return undefined
}

const extraKey = fc.stringMatching(/^x_[a-z0-9]{1,5}$/)
const plainKey = fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_]{0,6}$/)

const jsonLeaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null)
)

/** Any JSON value (what `{}` / `true` schemas allow). */
export const jsonValue = (depth: number): fc.Arbitrary<unknown> =>
  depth <= 0
    ? jsonLeaf
    : fc.oneof(
        jsonLeaf,
        fc.array(jsonValue(depth - 1), { maxLength: 3 }),
        fc.dictionary(plainKey, jsonValue(depth - 1), { maxKeys: 3, noNullPrototype: true })
      )

const isEmptySchema = (node: JsonSchema | boolean): boolean =>
  node === true ||
  (typeof node === "object" &&
    node.type === undefined &&
    node.$ref === undefined &&
    node.anyOf === undefined &&
    node.oneOf === undefined &&
    node.allOf === undefined &&
    node.properties === undefined &&
    node.const === undefined &&
    node.enum === undefined)

const isOpenMetaObject = (defName: string): boolean => defName.endsWith("MetaObject")

/** Merges the object branches of an `allOf` into one object schema. */
const mergeAllOf = (doc: SpecDocument, at: Located): JsonSchema => {
  const properties: Record<string, JsonSchema> = {}
  const required: Array<string> = []
  let open = false
  for (const [i, branch] of (at.node.allOf ?? []).entries()) {
    const resolved = deref(doc, { node: branch, pointer: `${at.pointer}/allOf/${i}`, defName: at.defName })
    if (resolved === undefined) continue
    const node = resolved.node.allOf !== undefined ? mergeAllOf(doc, resolved) : resolved.node
    Object.assign(properties, node.properties ?? {})
    required.push(...(node.required ?? []))
    const ap = node.additionalProperties
    if (ap !== undefined && ap !== false && isEmptySchema(ap)) open = true
  }
  return { type: "object", properties, required, ...(open ? { additionalProperties: true } : {}) }
}

const stringFor = (format: string | undefined): fc.Arbitrary<string> => {
  switch (format) {
    case "uri":
      return fc.webUrl()
    case "byte":
      return fc.base64String({ maxLength: 12 })
    case "date-time":
      return fc
        .date({ noInvalidDate: true, min: new Date(0), max: new Date(4102444800000) })
        .map((d) => d.toISOString())
    case "email":
      return fc.emailAddress()
    default:
      return fc.string({ maxLength: 10 })
  }
}

const ofType = (doc: SpecDocument, at: Located, type: string, depth: number): fc.Arbitrary<unknown> => {
  const node = at.node
  switch (type) {
    case "string":
      return stringFor(node.format)
    case "integer":
      return fc.integer({ min: node.minimum ?? -1_000_000, max: node.maximum ?? 1_000_000 })
    case "number":
      return fc.double({
        min: node.minimum ?? -1e9,
        max: node.maximum ?? 1e9,
        noNaN: true,
        noDefaultInfinity: true
      })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array": {
      if (depth <= 0) return fc.constant([])
      const items = node.items === undefined ? jsonValue(1) : arbitrary(doc, child(at, node.items, "items"), depth - 1)
      return fc.array(items, { maxLength: 2 })
    }
    case "object":
      return objectOf(doc, at, depth)
    default:
      throw new Error(`unsupported type ${type} at ${at.pointer}`)
  }
}

const child = (at: Located, node: JsonSchema, segment: string): Located => ({
  node,
  pointer: `${at.pointer}/${segment}`,
  defName: at.defName
})

const objectOf = (doc: SpecDocument, at: Located, depth: number): fc.Arbitrary<unknown> => {
  const node = at.node
  const properties = node.properties ?? {}
  const required = new Set(node.required ?? [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, schema] of Object.entries(properties)) {
    if (required.has(key) || depth > 0) {
      model[key] = arbitrary(doc, child(at, schema, `properties/${escapePointer(key)}`), depth - 1)
    }
  }
  const base = fc.record(model, {
    requiredKeys: Object.keys(model).filter((key) => required.has(key)),
    noNullPrototype: true
  })
  const ap = node.additionalProperties
  const open =
    (ap !== undefined && ap !== false && isEmptySchema(ap)) ||
    isOpenMetaObject(at.defName) ||
    (ap === undefined && Object.keys(properties).length === 0)
  if (depth <= 0 || (ap === undefined && !open)) return base
  const values =
    open || typeof ap !== "object" ? jsonValue(1) : arbitrary(doc, child(at, ap, "additionalProperties"), depth - 1)
  const extras = fc.dictionary(extraKey, values, { maxKeys: 2, noNullPrototype: true })
  return fc.tuple(base, extras).map(([fields, rest]) => ({ ...rest, ...fields }))
}

/** Arbitrary values valid against the schema node at `at` (depth bounds recursion). */
export const arbitrary = (doc: SpecDocument, at: Located, depth: number): fc.Arbitrary<unknown> => {
  const node = at.node
  if (node.$ref !== undefined) {
    const resolved = deref(doc, at)
    if (resolved === undefined) throw new Error(`dangling $ref at ${at.pointer}`)
    return arbitrary(doc, resolved, depth)
  }
  if (node.const !== undefined) return fc.constant(node.const)
  if (node.enum !== undefined) return fc.constantFrom(...node.enum)
  const alternatives = node.anyOf ?? node.oneOf
  if (alternatives !== undefined) {
    const keyword = node.anyOf !== undefined ? "anyOf" : "oneOf"
    return fc.oneof(...alternatives.map((branch, i) => arbitrary(doc, child(at, branch, `${keyword}/${i}`), depth)))
  }
  if (node.allOf !== undefined) return objectOf(doc, { ...at, node: mergeAllOf(doc, at) }, depth)
  if (node.type === undefined) {
    return node.properties !== undefined ? objectOf(doc, at, depth) : jsonValue(Math.min(depth, 2))
  }
  if (typeof node.type === "string") return ofType(doc, at, node.type, depth)
  return fc.oneof(...node.type.map((type) => ofType(doc, at, type, depth)))
}
