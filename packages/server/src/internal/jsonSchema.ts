/**
 * A validator for the JSON Schema (draft 2020-12, with the draft-07 spellings
 * MCP tools still use) found in tool input schemas: types, object and array
 * keywords, enums and consts, numeric and string bounds, patterns,
 * composition (`allOf`/`anyOf`/`oneOf`/`not`), conditionals and local `$ref`s
 * into `$defs`/`definitions`. Format and content keywords are annotations, as
 * the 2020-12 default vocabulary says; remote `$ref`s are not followed (they
 * validate nothing rather than fail).
 */
import * as Predicate from "effect/Predicate"
import { echo, listIssues } from "./params.ts"

export type JsonSchema = { readonly [keyword: string]: unknown } | boolean

export interface Issue {
  /** JSON Pointer of the offending value inside the instance. */
  readonly path: string
  readonly message: string
}

type Obj = { readonly [key: string]: unknown }

const isObj = (u: unknown): u is Obj => Predicate.isObject(u) && !Array.isArray(u)

const typeOf = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

const hasType = (value: unknown, type: string): boolean => {
  const actual = typeOf(value)
  return actual === type || (type === "number" && actual === "integer")
}

const equal = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]))
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equal(a[k], b[k]))
  }
  return false
}

const pointer = (path: string, key: string | number) =>
  `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`

const show = (u: unknown) => {
  const text = JSON.stringify(u)
  return text === undefined ? String(u) : text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const codePoints = (s: string) => Array.from(s).length

interface Context {
  readonly root: Obj
  readonly issues: Array<Issue>
  depth: number
}

const resolveRef = (root: Obj, ref: string): JsonSchema | undefined => {
  if (ref === "#") return root
  if (!ref.startsWith("#/")) return undefined
  let node: unknown = root
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~")
    if (!isObj(node)) return undefined
    node = node[key]
  }
  return isObj(node) || typeof node === "boolean" ? (node as JsonSchema) : undefined
}

/** Validates without recording issues (for `anyOf`, `oneOf`, `not`, `if`). */
const passes = (schema: JsonSchema, value: unknown, ctx: Context, path: string): boolean => {
  const scratch: Context = { root: ctx.root, issues: [], depth: ctx.depth }
  validateAt(schema, value, scratch, path)
  return scratch.issues.length === 0
}

const checkNumber = (s: Obj, value: number, report: (m: string) => void) => {
  if (typeof s.minimum === "number" && value < s.minimum) report(`must be >= ${s.minimum}`)
  if (typeof s.maximum === "number" && value > s.maximum) report(`must be <= ${s.maximum}`)
  if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) report(`must be > ${s.exclusiveMinimum}`)
  if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) report(`must be < ${s.exclusiveMaximum}`)
  if (typeof s.multipleOf === "number" && s.multipleOf > 0) {
    const q = value / s.multipleOf
    if (Math.abs(q - Math.round(q)) > 1e-9) report(`must be a multiple of ${s.multipleOf}`)
  }
}

const checkString = (s: Obj, value: string, report: (m: string) => void) => {
  const n = typeof s.minLength === "number" || typeof s.maxLength === "number" ? codePoints(value) : 0
  if (typeof s.minLength === "number" && n < s.minLength) report(`must have at least ${s.minLength} characters`)
  if (typeof s.maxLength === "number" && n > s.maxLength) report(`must have at most ${s.maxLength} characters`)
  if (typeof s.pattern === "string") {
    let re: RegExp | undefined
    try {
      re = new RegExp(s.pattern, "u")
    } catch {
      re = undefined
    }
    if (re !== undefined && !re.test(value)) report(`must match pattern ${s.pattern}`)
  }
}

const checkArray = (s: Obj, value: ReadonlyArray<unknown>, ctx: Context, path: string, report: (m: string) => void) => {
  if (typeof s.minItems === "number" && value.length < s.minItems) report(`must have at least ${s.minItems} items`)
  if (typeof s.maxItems === "number" && value.length > s.maxItems) report(`must have at most ${s.maxItems} items`)
  if (s.uniqueItems === true) {
    for (let i = 0; i < value.length; i++) {
      for (let j = i + 1; j < value.length; j++) {
        if (equal(value[i], value[j])) {
          report(`items ${i} and ${j} must be unique`)
          i = value.length
          break
        }
      }
    }
  }
  const prefix = Array.isArray(s.prefixItems) ? (s.prefixItems as ReadonlyArray<JsonSchema>) : []
  // Draft-07 `items: [...]` is the 2020-12 `prefixItems`.
  const tuple = Array.isArray(s.items) ? (s.items as ReadonlyArray<JsonSchema>) : prefix
  tuple.forEach((schema, i) => {
    if (i < value.length) validateAt(schema, value[i], ctx, pointer(path, i))
  })
  const rest = Array.isArray(s.items) ? s.additionalItems : s.items
  if (isObj(rest) || typeof rest === "boolean") {
    for (let i = tuple.length; i < value.length; i++) validateAt(rest as JsonSchema, value[i], ctx, pointer(path, i))
  }
  if (isObj(s.contains) || typeof s.contains === "boolean") {
    const count = value.filter((item, i) => passes(s.contains as JsonSchema, item, ctx, pointer(path, i))).length
    const min = typeof s.minContains === "number" ? s.minContains : 1
    if (count < min) report(`must contain at least ${min} matching item(s)`)
    if (typeof s.maxContains === "number" && count > s.maxContains)
      report(`must contain at most ${s.maxContains} matching item(s)`)
  }
}

const checkObject = (s: Obj, value: Obj, ctx: Context, path: string, report: (m: string) => void) => {
  const keys = Object.keys(value)
  if (typeof s.minProperties === "number" && keys.length < s.minProperties)
    report(`must have at least ${s.minProperties} properties`)
  if (typeof s.maxProperties === "number" && keys.length > s.maxProperties)
    report(`must have at most ${s.maxProperties} properties`)
  if (Array.isArray(s.required)) {
    for (const key of s.required as ReadonlyArray<unknown>) {
      if (typeof key === "string" && !(key in value))
        ctx.issues.push({ path: pointer(path, key), message: "is required" })
    }
  }
  const properties = isObj(s.properties) ? s.properties : {}
  const patterns = isObj(s.patternProperties)
    ? Object.entries(s.patternProperties).flatMap(([p, schema]) => {
        try {
          return [[new RegExp(p, "u"), schema as JsonSchema] as const]
        } catch {
          return []
        }
      })
    : []
  for (const key of keys) {
    const at = pointer(path, key)
    let matched = false
    if (key in properties) {
      matched = true
      validateAt(properties[key] as JsonSchema, value[key], ctx, at)
    }
    for (const [re, schema] of patterns) {
      if (re.test(key)) {
        matched = true
        validateAt(schema, value[key], ctx, at)
      }
    }
    if (!matched && s.additionalProperties !== undefined) {
      if (s.additionalProperties === false) ctx.issues.push({ path: at, message: "is not an allowed property" })
      else validateAt(s.additionalProperties as JsonSchema, value[key], ctx, at)
    }
    if (s.propertyNames !== undefined && !passes(s.propertyNames as JsonSchema, key, ctx, at)) {
      ctx.issues.push({ path: at, message: "has an invalid property name" })
    }
  }
  const dependent = isObj(s.dependentRequired) ? s.dependentRequired : {}
  for (const [key, needs] of Object.entries(dependent)) {
    if (key in value && Array.isArray(needs)) {
      for (const need of needs) if (!(need in value)) report(`${need} is required when ${key} is present`)
    }
  }
}

const validateAt = (schema: JsonSchema, value: unknown, ctx: Context, path: string): void => {
  if (schema === true) return
  if (schema === false) {
    ctx.issues.push({ path, message: "is not allowed" })
    return
  }
  if (!isObj(schema)) return
  const report = (message: string) => {
    ctx.issues.push({ path, message })
  }
  if (typeof schema.$ref === "string") {
    if (ctx.depth > 64) {
      report(`$ref ${schema.$ref} nests too deeply`)
      return
    }
    const target = resolveRef(ctx.root, schema.$ref)
    if (target !== undefined) {
      ctx.depth++
      validateAt(target, value, ctx, path)
      ctx.depth--
    }
  }
  const type = schema.type
  if (typeof type === "string" || Array.isArray(type)) {
    const types = (typeof type === "string" ? [type] : type) as ReadonlyArray<string>
    if (!types.some((t) => hasType(value, t))) {
      report(`must be ${types.join(" or ")}, got ${typeOf(value)}`)
      return
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => equal(e, value))) {
    report(`must be one of ${show(schema.enum)}`)
  }
  if ("const" in schema && !equal(schema.const, value)) report(`must be ${show(schema.const)}`)
  if (typeof value === "number") checkNumber(schema, value, report)
  else if (typeof value === "string") checkString(schema, value, report)
  else if (Array.isArray(value)) checkArray(schema, value, ctx, path, report)
  else if (isObj(value)) checkObject(schema, value, ctx, path, report)
  if (Array.isArray(schema.allOf)) for (const sub of schema.allOf) validateAt(sub as JsonSchema, value, ctx, path)
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((sub) => passes(sub as JsonSchema, value, ctx, path))) {
    report("must match at least one schema in anyOf")
  }
  if (Array.isArray(schema.oneOf)) {
    const n = schema.oneOf.filter((sub) => passes(sub as JsonSchema, value, ctx, path)).length
    if (n !== 1) report(`must match exactly one schema in oneOf (matched ${n})`)
  }
  if (schema.not !== undefined && passes(schema.not as JsonSchema, value, ctx, path))
    report("must not match the schema in not")
  if (schema.if !== undefined) {
    const branch = passes(schema.if as JsonSchema, value, ctx, path) ? schema.then : schema.else
    if (branch !== undefined) validateAt(branch as JsonSchema, value, ctx, path)
  }
}

/** Every issue of `value` against `schema` (empty when it is valid). */
export const validate = (schema: JsonSchema, value: unknown): ReadonlyArray<Issue> => {
  const ctx: Context = { root: isObj(schema) ? schema : {}, issues: [], depth: 0 }
  validateAt(schema, value, ctx, "")
  return ctx.issues
}

/** One line describing the issues, for error messages. */
export const describe = (issues: ReadonlyArray<Issue>): string =>
  listIssues(issues.map((issue) => `${issue.path === "" ? "value" : echo(issue.path)} ${issue.message}`))
