/**
 * Every definition of every revision's schema.json has a wire Schema, and the
 * JSON Schema effect derives from it (`Schema.toJsonSchemaDocument`) agrees
 * with the spec: property names, required keys, literal / enum values, array
 * items, primitive types, union alternatives (count and referenced names).
 * References are compared by name; each referenced definition is checked on its own.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import { Effect, Schema } from "effect"
import { type JsonSchema, readDefinitions, wire } from "./specFiles.ts"

type Doc = Readonly<Record<string, unknown>>

/**
 * Intentional differences between the spec and the wire schemas, each a rule
 * over the reported issue with its reason. (Union member order is not compared:
 * the generator reorders `anyOf` members where spec order would decode lossily,
 * and JSON Schema `anyOf` has no order.)
 */
const deviations: ReadonlyArray<{ readonly reason: string; readonly applies: (issue: string) => boolean }> = [
  {
    reason:
      "a message's inline params also declare the `_meta` of the base Request / Notification, which the " +
      "schema export drops where the TypeScript source overrides `params` (progress tokens ride in params._meta)",
    applies: (issue) => {
      const m = issue.match(/^\w+(Request|Notification)\.params: properties (.*) vs (.*)$/)
      return m !== null && `${m[2]},"_meta"`.split(",").sort().join(",") === m[3]
    }
  },
  {
    reason:
      "ClientCapabilities, an open object in every revision, names `extensions` before 2026-07-28 too, so that " +
      "a client's extension declarations (MCP Apps in `initialize`) survive decoding (scripts/wire/deviations.ts)",
    applies: (issue) => {
      const m = issue.match(/^ClientCapabilities: properties (.*) vs (.*)$/)
      return m !== null && `${m[1]},"extensions"`.split(",").sort().join(",") === m[2]
    }
  }
]

const refName = (ref: string): string => ref.slice(ref.lastIndexOf("/") + 1)
/** effect names a second schema with an identifier already taken `Name_1`. */
const effectRefName = (ref: string): string => refName(ref).replace(/_\d+$/, "")

const sorted = (xs: Iterable<unknown>): Array<string> => [...xs].map((x) => JSON.stringify(x)).sort()

class Comparison {
  readonly issues: Array<string> = []
  readonly spec: Readonly<Record<string, JsonSchema>>
  readonly effect: Readonly<Record<string, Doc>>

  constructor(spec: Readonly<Record<string, JsonSchema>>, effect: Readonly<Record<string, Doc>>) {
    this.spec = spec
    this.effect = effect
  }

  /** A spec node as an object: bare `$ref`s followed (with `follow`), `allOf` members merged. */
  specNode(node: JsonSchema, follow: boolean): JsonSchema {
    if (follow && node.$ref !== undefined) return this.specNode(this.spec[refName(node.$ref)]!, true)
    if (node.allOf === undefined) return node
    const properties: Record<string, JsonSchema> = {}
    const required = new Set<string>()
    for (const member of node.allOf) {
      const m = this.specNode(member, true)
      Object.assign(properties, m.properties)
      for (const r of m.required ?? []) required.add(r)
    }
    return { type: "object", properties, required: [...required] }
  }

  /**
   * An effect node with its `allOf` wrappers folded in (effect puts key descriptions and the
   * rest signature of StructWithRest there). `$ref`s are kept unless `follow`.
   */
  effectNode(node: Doc, follow: boolean): Doc {
    const out: Record<string, unknown> = { ...node }
    delete out["allOf"]
    for (const member of (node["allOf"] as ReadonlyArray<Doc> | undefined) ?? []) {
      for (const [k, v] of Object.entries(this.effectNode(member, false))) {
        if (k !== "description" && !(k in out)) out[k] = v
      }
    }
    if (follow && typeof out["$ref"] === "string") {
      const target = this.effectNode(this.effect[refName(out["$ref"])]!, true)
      delete out["$ref"]
      return { ...target, ...out }
    }
    return out
  }

  /** Union alternatives, nested unions and type lists flattened. */
  specAlternatives(node: JsonSchema): Array<JsonSchema> {
    const members = node.anyOf ?? node.oneOf
    if (members !== undefined) return members.flatMap((m) => this.specAlternatives(m))
    if (Array.isArray(node.type)) return node.type.map((type: string) => ({ type }))
    return [node]
  }

  effectAlternatives(node: Doc): Array<Doc> {
    const n = this.effectNode(node, false)
    const members = (n["anyOf"] ?? n["oneOf"]) as ReadonlyArray<Doc> | undefined
    if (members !== undefined) return members.flatMap((m) => this.effectAlternatives(m))
    if (Array.isArray(n["type"])) return n["type"].map((type: string) => ({ type }))
    return [n]
  }

  compare(specIn: JsonSchema, effectIn: Doc, at: string, top: boolean): void {
    const issue = (what: string): void => {
      this.issues.push(`${at}: ${what}`)
    }
    const spec = this.specNode(specIn, top)
    if (!top && spec.$ref !== undefined) {
      const e = this.effectNode(effectIn, false)
      const ref = e["$ref"]
      if (typeof ref !== "string" || effectRefName(ref) !== refName(spec.$ref)) {
        issue(`expected a reference to ${refName(spec.$ref)}, got ${JSON.stringify(e).slice(0, 200)}`)
      }
      return
    }
    const effect = this.effectNode(effectIn, true)
    if (spec.anyOf !== undefined || spec.oneOf !== undefined || Array.isArray(spec.type)) {
      const s = this.specAlternatives(spec)
      const e = this.effectAlternatives(effect)
      if (s.length !== e.length) {
        issue(`union of ${s.length} alternatives, effect has ${e.length}`)
        return
      }
      const refs = (xs: ReadonlyArray<{ readonly $ref?: unknown }>, name: (r: string) => string) =>
        sorted(xs.flatMap((x) => (typeof x.$ref === "string" ? [name(x.$ref)] : [])))
      const sr = refs(s, refName)
      const er = refs(e, effectRefName)
      if (JSON.stringify(sr) !== JSON.stringify(er)) issue(`union references ${sr} vs ${er}`)
      return
    }
    if (spec.const !== undefined) {
      const e = effect["const"] !== undefined ? [effect["const"]] : effect["enum"]
      if (JSON.stringify(e) !== JSON.stringify([spec.const])) issue(`const ${JSON.stringify(spec.const)} vs ${e}`)
      return
    }
    if (spec.enum !== undefined) {
      const e = (effect["enum"] as ReadonlyArray<unknown> | undefined) ?? []
      if (JSON.stringify(sorted(spec.enum)) !== JSON.stringify(sorted(e))) issue(`enum ${spec.enum} vs ${e}`)
      return
    }
    const type = spec.type ?? (spec.properties !== undefined ? "object" : undefined)
    if (type === undefined) {
      if (Object.keys(effect).some((k) => k !== "description"))
        issue(`expected any value, got ${JSON.stringify(effect)}`)
      return
    }
    if (effect["type"] !== type) {
      issue(`type ${type} vs ${effect["type"]}`)
      return
    }
    if (type === "array") {
      if (spec.items !== undefined) this.compare(spec.items, effect["items"] as Doc, `${at}[]`, false)
      return
    }
    if (type !== "object") return
    const eProps = (effect["properties"] as Readonly<Record<string, Doc>> | undefined) ?? {}
    const sProps = spec.properties ?? {}
    const sKeys = sorted(Object.keys(sProps))
    const eKeys = sorted(Object.keys(eProps))
    if (JSON.stringify(sKeys) !== JSON.stringify(eKeys)) issue(`properties ${sKeys} vs ${eKeys}`)
    const sReq = sorted(spec.required ?? [])
    const eReq = sorted((effect["required"] as ReadonlyArray<string> | undefined) ?? [])
    if (JSON.stringify(sReq) !== JSON.stringify(eReq)) issue(`required ${sReq} vs ${eReq}`)
    for (const [k, v] of Object.entries(sProps)) {
      if (eProps[k] !== undefined) this.compare(v, eProps[k], `${at}.${k}`, false)
    }
    const rest = spec.additionalProperties
    if (typeof rest === "object" && Object.keys(rest).length > 0) {
      const eRest = effect["additionalProperties"]
      if (typeof eRest !== "object" || eRest === null) issue("expected additionalProperties with a schema")
      else this.compare(rest, eRest as Doc, `${at}{}`, false)
    }
  }
}

describe("wire modules agree with schema.json", () => {
  for (const version of ProtocolVersion.all) {
    it.effect(version, () =>
      Effect.sync(() => {
        const definitions = readDefinitions(version)
        const module = wire[version]
        const issues: Array<string> = []
        let covered = 0
        let deviating = 0
        for (const [name, spec] of Object.entries(definitions)) {
          const schema = module[name]
          if (!Schema.isSchema(schema)) {
            issues.push(`${name}: no wire schema`)
            continue
          }
          const doc = Schema.toJsonSchemaDocument(schema)
          const comparison = new Comparison(definitions, doc.definitions as Readonly<Record<string, Doc>>)
          comparison.compare(spec, doc.schema as Doc, name, true)
          const real = comparison.issues.filter((i) => !deviations.some((d) => d.applies(i)))
          deviating += comparison.issues.length - real.length
          if (real.length === 0) covered++
          issues.push(...real)
        }
        const total = Object.keys(definitions).length
        console.log(
          `${version}: ${covered}/${total} definitions` + (deviating > 0 ? ` (${deviating} listed deviations)` : "")
        )
        assert.deepStrictEqual(issues, [])
        assert.strictEqual(covered, total)
      })
    )
  }

  it.effect("a deliberately wrong schema is caught", () =>
    Effect.sync(() => {
      const definitions = readDefinitions("2025-06-18")
      const wrong = Schema.Struct({ name: Schema.String, version: Schema.optionalKey(Schema.String) })
      const doc = Schema.toJsonSchemaDocument(wrong)
      const comparison = new Comparison(definitions, doc.definitions as Readonly<Record<string, Doc>>)
      comparison.compare(definitions["Implementation"]!, doc.schema as Doc, "Implementation", true)
      assert.isTrue(comparison.issues.some((i) => i.includes("required")))
    })
  )
})
