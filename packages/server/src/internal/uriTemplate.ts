/**
 * RFC 6570 URI templates, levels 1 to 4: expansion (every operator, prefix
 * and explode modifiers, lists and associative arrays) and the reverse,
 * matching a concrete URI against a template to recover its variables.
 *
 * Matching is the inverse of expansion where expansion is unambiguous. A
 * value that expanded from a list comes back as a list; an exploded
 * associative array comes back as a record (named operators) or as a list
 * of `key=value` items' values keyed by name. Prefix modifiers (`{var:3}`)
 * match the prefix only.
 */

export type Value = string | ReadonlyArray<string> | { readonly [key: string]: string } | undefined

export type Variables = { readonly [name: string]: Value }

interface VarSpec {
  readonly name: string
  readonly explode: boolean
  readonly prefix: number | undefined
}

interface Operator {
  readonly first: string
  readonly sep: string
  readonly named: boolean
  readonly ifEmpty: string
  readonly reserved: boolean
}

const operators: { readonly [op: string]: Operator } = {
  "": { first: "", sep: ",", named: false, ifEmpty: "", reserved: false },
  "+": { first: "", sep: ",", named: false, ifEmpty: "", reserved: true },
  "#": { first: "#", sep: ",", named: false, ifEmpty: "", reserved: true },
  ".": { first: ".", sep: ".", named: false, ifEmpty: "", reserved: false },
  "/": { first: "/", sep: "/", named: false, ifEmpty: "", reserved: false },
  ";": { first: ";", sep: ";", named: true, ifEmpty: "", reserved: false },
  "?": { first: "?", sep: "&", named: true, ifEmpty: "=", reserved: false },
  "&": { first: "&", sep: "&", named: true, ifEmpty: "=", reserved: false }
}

type Part =
  | { readonly _tag: "Literal"; readonly text: string }
  | {
      readonly _tag: "Expression"
      readonly op: string
      readonly operator: Operator
      readonly vars: ReadonlyArray<VarSpec>
    }

export interface Template {
  readonly source: string
  readonly parts: ReadonlyArray<Part>
  /** Variable names in order of appearance. */
  readonly variables: ReadonlyArray<string>
}

export class TemplateError extends Error {
  override readonly name = "TemplateError"
}

const varName = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/

const parseVar = (spec: string, source: string): VarSpec => {
  let name = spec
  let explode = false
  let prefix: number | undefined
  if (name.endsWith("*")) {
    explode = true
    name = name.slice(0, -1)
  } else {
    const colon = name.indexOf(":")
    if (colon >= 0) {
      const digits = name.slice(colon + 1)
      if (!/^[1-9][0-9]{0,3}$/.test(digits)) throw new TemplateError(`invalid prefix in ${source}: ${spec}`)
      prefix = Number(digits)
      name = name.slice(0, colon)
    }
  }
  if (!varName.test(name)) throw new TemplateError(`invalid variable name in ${source}: ${spec}`)
  return { name, explode, prefix }
}

/** Parses a template; throws `TemplateError` on malformed input. */
export const parse = (source: string): Template => {
  const parts: Array<Part> = []
  const variables: Array<string> = []
  let i = 0
  while (i < source.length) {
    const open = source.indexOf("{", i)
    const closeBefore = source.indexOf("}", i)
    if (closeBefore >= 0 && (open < 0 || closeBefore < open)) throw new TemplateError(`unmatched } in ${source}`)
    if (open < 0) {
      parts.push({ _tag: "Literal", text: source.slice(i) })
      break
    }
    if (open > i) parts.push({ _tag: "Literal", text: source.slice(i, open) })
    const close = source.indexOf("}", open)
    if (close < 0) throw new TemplateError(`unclosed expression in ${source}`)
    let body = source.slice(open + 1, close)
    let op = ""
    const c = body.charAt(0)
    if (c in operators && c !== "") {
      op = c
      body = body.slice(1)
    } else if ("=,!@|".includes(c) && c !== "") {
      throw new TemplateError(`reserved operator ${c} in ${source}`)
    }
    if (body.length === 0) throw new TemplateError(`empty expression in ${source}`)
    const vars = body.split(",").map((spec) => parseVar(spec, source))
    for (const v of vars) if (!variables.includes(v.name)) variables.push(v.name)
    parts.push({ _tag: "Expression", op, operator: operators[op]!, vars })
    i = close + 1
  }
  return { source, parts, variables }
}

// ---------------------------------------------------------------------------
// Expansion
// ---------------------------------------------------------------------------

const unreservedChar = /[A-Za-z0-9\-._~]/
const reservedChar = /[:/?#[\]@!$&'()*+,;=]/

const hex = (byte: number) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`

// encodeURIComponent leaves a few reserved characters (!'()*) alone; those get encoded by hand.
const pctEncode = (char: string): string => {
  try {
    const encoded = encodeURIComponent(char)
    return encoded === char ? hex(char.charCodeAt(0)) : encoded
  } catch {
    // A lone surrogate has no UTF-8 form: it becomes U+FFFD.
    return "%EF%BF%BD"
  }
}

const encode = (value: string, reserved: boolean): string => {
  let out = ""
  const chars = Array.from(value)
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!
    if (unreservedChar.test(ch) || (reserved && reservedChar.test(ch))) {
      out += ch
    } else if (reserved && ch === "%" && /^%[0-9A-Fa-f]{2}$/.test(chars.slice(i, i + 3).join(""))) {
      // Already pct-encoded triplets pass through reserved expansion unchanged.
      out += chars.slice(i, i + 3).join("")
      i += 2
    } else {
      out += pctEncode(ch)
    }
  }
  return out
}

const isDefined = (value: Value): value is Exclude<Value, undefined> => {
  if (value === undefined || value === null) return false
  if (typeof value === "string") return true
  if (Array.isArray(value)) return value.length > 0
  return Object.keys(value).length > 0
}

const expandVar = (operator: Operator, spec: VarSpec, value: Exclude<Value, undefined>): string => {
  const name = spec.name
  if (typeof value === "string") {
    const v = encode(
      spec.prefix === undefined ? value : Array.from(value).slice(0, spec.prefix).join(""),
      operator.reserved
    )
    if (!operator.named) return v
    return value.length === 0 ? `${name}${operator.ifEmpty}` : `${name}=${v}`
  }
  const pairs: ReadonlyArray<readonly [string | undefined, string]> = Array.isArray(value)
    ? (value as ReadonlyArray<string>).map((v) => [undefined, v] as const)
    : Object.entries(value as { readonly [key: string]: string })
  const isList = Array.isArray(value)
  if (!spec.explode) {
    const joined = pairs
      .flatMap(([k, v]) =>
        k === undefined ? [encode(v, operator.reserved)] : [encode(k, operator.reserved), encode(v, operator.reserved)]
      )
      .join(",")
    if (!operator.named) return joined
    return joined.length === 0 ? `${name}${operator.ifEmpty}` : `${name}=${joined}`
  }
  return pairs
    .map(([k, v]) => {
      const ev = encode(v, operator.reserved)
      if (isList) {
        if (!operator.named) return ev
        return v.length === 0 ? `${name}${operator.ifEmpty}` : `${name}=${ev}`
      }
      const ek = encode(k!, operator.reserved)
      return `${ek}=${ev}`
    })
    .join(operator.sep)
}

/** Expands a template with the given variables (undefined ones are skipped, as RFC 6570 says). */
export const expand = (template: Template | string, variables: Variables): string => {
  const t = typeof template === "string" ? parse(template) : template
  let out = ""
  for (const part of t.parts) {
    if (part._tag === "Literal") {
      out += encode(part.text, true)
      continue
    }
    const items: Array<string> = []
    for (const spec of part.vars) {
      const value = variables[spec.name]
      if (isDefined(value)) items.push(expandVar(part.operator, spec, value))
    }
    if (items.length > 0) out += part.operator.first + items.join(part.operator.sep)
  }
  return out
}

// ---------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

// What one expression's expansion can contain (after its leading `first` char).
const regionPattern = (op: string): string => {
  switch (op) {
    case "":
      return "([^/?#]*)"
    case "+":
      return "([^?#]*)"
    case "#":
      return "(?:#(.*))?"
    case ".":
      return "((?:\\.[^/?#]*)*)"
    case "/":
      return "((?:/[^?#]*)*)"
    case ";":
      return "((?:;[^/?#]*)*)"
    case "?":
      return "(?:\\?([^#]*))?"
    default:
      return "((?:&[^#]*)*)"
  }
}

const decode = (text: string): string => decodeURIComponent(text)

interface Matcher {
  readonly regex: RegExp
  readonly expressions: ReadonlyArray<Extract<Part, { _tag: "Expression" }>>
}

const matchers = new WeakMap<Template, Matcher>()

const matcherOf = (template: Template): Matcher => {
  let m = matchers.get(template)
  if (m === undefined) {
    let pattern = "^"
    const expressions: Array<Extract<Part, { _tag: "Expression" }>> = []
    for (const part of template.parts) {
      if (part._tag === "Literal") {
        pattern += escapeRegExp(part.text)
      } else {
        pattern += regionPattern(part.op)
        expressions.push(part)
      }
    }
    m = { regex: new RegExp(`${pattern}$`, "s"), expressions }
    matchers.set(template, m)
  }
  return m
}

type Expression = Extract<Part, { _tag: "Expression" }>

/** The items of one expression's expansion, split on its separator (after its leading character). */
const itemsOf = (expression: Expression, region: string): Array<string> => {
  const op = expression.op
  const body = op === "." || op === "/" || op === ";" || op === "&" ? region.slice(1) : region
  return body.split(expression.operator.sep)
}

const assignUnnamed = (expression: Expression, items: ReadonlyArray<string>, out: Record<string, Value>) => {
  const vars = expression.vars
  if (vars.length === 1) {
    const spec = vars[0]!
    if (spec.explode) {
      if (items.length > 0 && items.every((v) => v.includes("="))) {
        const record: Record<string, string> = {}
        for (const item of items) {
          const eq = item.indexOf("=")
          record[decode(item.slice(0, eq))] = decode(item.slice(eq + 1))
        }
        out[spec.name] = record
      } else {
        out[spec.name] = items.map(decode)
      }
      return
    }
    const joined = items.join(expression.operator.sep)
    // Simple expansion encodes commas inside a string, so a bare comma separates list items;
    // reserved expansion (`+`, `#`) keeps commas, so its value stays one string.
    const parts = expression.operator.reserved ? [joined] : joined.split(",")
    out[spec.name] = parts.length > 1 ? parts.map(decode) : decode(parts[0] ?? "")
    return
  }
  vars.forEach((spec, i) => {
    const v = items[i]
    if (v !== undefined) out[spec.name] = decode(v)
  })
}

const assignNamed = (expression: Expression, items: ReadonlyArray<string>, out: Record<string, Value>) => {
  const byName = new Map(expression.vars.map((v) => [v.name, v]))
  const lists = new Map<string, Array<string>>()
  const extras: Record<string, string> = {}
  for (const item of items) {
    if (item.length === 0) continue
    const eq = item.indexOf("=")
    const key = decode(eq < 0 ? item : item.slice(0, eq))
    const raw = eq < 0 ? "" : item.slice(eq + 1)
    const spec = byName.get(key)
    if (spec === undefined) {
      extras[key] = decode(raw)
    } else if (spec.explode) {
      const list = lists.get(key) ?? []
      list.push(decode(raw))
      lists.set(key, list)
    } else {
      const parts = raw.split(",")
      out[key] = parts.length > 1 ? parts.map(decode) : decode(raw)
    }
  }
  for (const [key, list] of lists) out[key] = list.length === 1 ? list[0] : list
  // Keys that name no variable come from the one exploded associative variable.
  const exploded = expression.vars.filter((v) => v.explode && out[v.name] === undefined)
  if (exploded.length === 1 && Object.keys(extras).length > 0) out[exploded[0]!.name] = extras
}

/** The variables of `uri` when it matches `template`, or undefined. */
export const match = (template: Template | string, uri: string): Record<string, Value> | undefined => {
  const t = typeof template === "string" ? parse(template) : template
  const { regex, expressions } = matcherOf(t)
  const m = regex.exec(uri)
  if (m === null) return undefined
  const out: Record<string, Value> = {}
  try {
    // A greedy `?` region also swallows the `&` expressions after it, so query
    // items are pooled and handed out by name rather than by position.
    const queryItems: Array<string> = []
    const queryNames = new Set<string>()
    expressions.forEach((expression, i) => {
      const region = m[i + 1]
      if (expression.op === "?" || expression.op === "&") {
        for (const v of expression.vars) queryNames.add(v.name)
        if (region !== undefined && region.length > 0) queryItems.push(...itemsOf(expression, region))
      }
    })
    const nameOf = (item: string) => decode(item.includes("=") ? item.slice(0, item.indexOf("=")) : item)
    expressions.forEach((expression, i) => {
      if (expression.op === "?" || expression.op === "&") {
        const own = new Set(expression.vars.map((v) => v.name))
        const takesExtras = expression.vars.some((v) => v.explode)
        const items = queryItems.filter((item) => {
          const name = nameOf(item)
          return own.has(name) || (takesExtras && !queryNames.has(name))
        })
        assignNamed(expression, items, out)
        return
      }
      const region = m[i + 1]
      // Absent optional regions (`#`) and empty prefixed regions leave their variables undefined.
      if (region === undefined || (region.length === 0 && expression.operator.first !== "")) return
      const items = itemsOf(expression, region)
      if (expression.operator.named) assignNamed(expression, items, out)
      else assignUnnamed(expression, items, out)
    })
  } catch {
    // Malformed percent-encoding: the URI is not an expansion of the template.
    return undefined
  }
  return out
}
