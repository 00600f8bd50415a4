/**
 * Wire ⊆ domain, second source: values generated from the generated wire
 * schemas (`internal/wire/v*.ts`), encoded to their wire form, decode with the
 * domain schema to themselves. Complements WireSubset.test.ts, which generates
 * from schema.json directly.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as v2024_11_05 from "../../src/internal/wire/v2024_11_05.ts"
import * as v2025_03_26 from "../../src/internal/wire/v2025_03_26.ts"
import * as v2025_06_18 from "../../src/internal/wire/v2025_06_18.ts"
import * as v2025_11_25 from "../../src/internal/wire/v2025_11_25.ts"
import * as v2026_07_28 from "../../src/internal/wire/v2026_07_28.ts"
import { cases } from "./cases.ts"
import { loadSpec, locate } from "./specArbitrary.ts"

const modules: { readonly [V in ProtocolVersion.ProtocolVersion]: object } = {
  "2024-11-05": v2024_11_05.definitions(),
  "2025-03-26": v2025_03_26.definitions(),
  "2025-06-18": v2025_06_18.definitions(),
  "2025-11-25": v2025_11_25.definitions(),
  "2026-07-28": v2026_07_28.definitions()
}

// biome-ignore lint/suspicious/noExplicitAny: wire schemas of every shape, looked up by definition name
type AnySchema = Schema.Codec<any, any, never, never>

const isSchema = (u: unknown): u is AnySchema => Schema.isSchema(u)

/** The property `key` of an object schema (through suspensions, and the first union member that has it). */
const property = (ast: SchemaAST.AST, key: string): SchemaAST.AST | undefined => {
  const resolved = SchemaAST.isSuspend(ast) ? ast.thunk() : ast
  if (SchemaAST.isUnion(resolved)) {
    for (const member of resolved.types) {
      const found = property(member, key)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (!SchemaAST.isObjects(resolved)) return undefined
  return resolved.propertySignatures.find((p) => p.name === key)?.type
}

/** The wire schema at `[definition, property, ...]`, when the revision's module has it. */
const wireAt = (module: object, spec: ReadonlyArray<string>): AnySchema | undefined => {
  const [name, ...rest] = spec
  const root: unknown = name === undefined ? undefined : (module as Record<string, unknown>)[name]
  if (!isSchema(root)) return undefined
  let ast: SchemaAST.AST | undefined = root.ast
  for (const key of rest) {
    ast = ast === undefined ? undefined : property(ast, key)
  }
  return ast === undefined ? undefined : (Schema.make(ast) as AnySchema)
}

describe("values of the generated wire schemas decode into the domain model", () => {
  it.effect("each case is in a wire module exactly where it is in that revision's schema.json", () =>
    Effect.sync(() => {
      const docs = ProtocolVersion.all.map(loadSpec)
      for (const x of cases) {
        const inSpec = docs.filter((doc) => locate(doc, x.spec) !== undefined).map((doc) => doc.revision)
        const inWire = ProtocolVersion.all.filter((revision) => wireAt(modules[revision], x.spec) !== undefined)
        assert.deepStrictEqual(inWire, inSpec, x.spec.join("."))
      }
    })
  )

  for (const revision of ProtocolVersion.all) {
    describe(revision, () => {
      for (const x of cases) {
        const wire = wireAt(modules[revision], x.spec)
        if (wire === undefined) continue
        it.effect(x.spec.join("."), () =>
          Effect.gen(function* () {
            const values = yield* Arbitrary.sampleEffect(Arbitrary.schema(wire), { count: 40, size: 6, seed: 1 })
            const encode = Schema.encodeUnknownSync(wire)
            const decode = Schema.decodeUnknownExit(x.domain)
            for (const value of values) {
              const onWire = encode(value)
              const exit = decode(onWire)
              if (Exit.isFailure(exit)) {
                assert.fail(`rejected ${JSON.stringify(onWire)}: ${String(exit.cause)}`)
              } else {
                assert.deepStrictEqual(exit.value, onWire)
              }
            }
          })
        )
      }
    })
  }
})
