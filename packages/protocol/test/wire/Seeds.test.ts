/**
 * Every complete JSON-RPC message quoted in the seed spec texts (extracted into
 * spec/seed-examples.json by scripts/extract-seed-examples.ts) decodes under
 * the revision it is quoted for: requests and notifications through the
 * registry (params with the method's params schema), responses with the result
 * schema of the request they answer (or, when that request is not quoted, the
 * union of the revision's result schemas), errors with the revision's JSON-RPC
 * error schema.
 */
import * as fs from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import type { AnyCodec } from "@effect-mcp/protocol/Revision"
import { Effect, Exit, Schema } from "effect"
import { seedExamplesFile, wire } from "./specFiles.ts"

interface Example {
  readonly at: string
  readonly version: ProtocolVersion.ProtocolVersion
  readonly message: Readonly<Record<string, unknown>>
}

/** Quoted messages that are not valid on purpose, with the reason. They must keep failing. */
const invalid: Readonly<Record<string, string>> = {
  "003_ef5d2202dbf1e379.txt:50":
    'a shape sketch, not a message: both result and error, and type names ("number") as values'
}

const examples: ReadonlyArray<Example> = JSON.parse(fs.readFileSync(seedExamplesFile, "utf8"))

const decodes = (schema: AnyCodec, value: unknown): boolean =>
  Exit.isSuccess(Schema.decodeUnknownExit(schema)(value, { onExcessProperty: "ignore" }))

const schemaNamed = (version: ProtocolVersion.ProtocolVersion, ...names: ReadonlyArray<string>): AnyCodec => {
  const schema = names.map((n) => wire[version][n]).find(Schema.isSchema)
  assert.isDefined(schema, `${version} has none of ${names}`)
  return schema as AnyCodec
}

interface Tally {
  viaRegistry: number
  generic: number
  results: number
  /** Results whose request is quoted too, so they were checked against that method's result schema. */
  resultsOfKnownMethod: number
  errors: number
  failures: Array<string>
}

const check = (version: ProtocolVersion.ProtocolVersion, found: ReadonlyArray<Example>): Tally => {
  const revision = Registry.get(version)
  const tally: Tally = { viaRegistry: 0, generic: 0, results: 0, resultsOfKnownMethod: 0, errors: 0, failures: [] }
  const anyResult = Schema.Union([
    ...new Set([...revision.methods.values()].flatMap((m) => (m._tag === "Request" ? [m.result] : [])))
  ])
  // The method of the request each id answers, per file.
  const pending = new Map<string, string>()
  for (const { at, message } of found) {
    const file = at.slice(0, at.indexOf(":"))
    const id = `${file}#${JSON.stringify(message["id"])}`
    let ok: boolean
    if (typeof message["method"] === "string") {
      const spec = revision.methods.get(message["method"])
      if ("id" in message) pending.set(id, message["method"])
      if (spec === undefined) {
        // Placeholder methods (`some_method`, `example_method`) only illustrate the envelope.
        tally.generic++
        ok = decodes(schemaNamed(version, "id" in message ? "JSONRPCRequest" : "JSONRPCNotification"), message)
      } else {
        tally.viaRegistry++
        ok = "params" in message ? decodes(spec.params, message["params"]) : !spec.paramsRequired
      }
    } else if ("error" in message) {
      tally.errors++
      ok = decodes(schemaNamed(version, "JSONRPCError", "JSONRPCErrorResponse"), message)
    } else {
      tally.results++
      const method = pending.get(id)
      const spec = method === undefined ? undefined : revision.methods.get(method)
      if (spec?._tag === "Request") tally.resultsOfKnownMethod++
      ok = decodes(spec?._tag === "Request" ? spec.result : anyResult, message["result"])
    }
    if (ok === (invalid[at] !== undefined))
      tally.failures.push(`${at}: ${ok ? "decodes but is listed as invalid" : JSON.stringify(message)}`)
  }
  return tally
}

describe("seed spec texts", () => {
  it("quote JSON-RPC messages of the three oldest revisions", () => {
    const where = new Set(examples.map((e) => e.at))
    for (const at of Object.keys(invalid)) assert.isTrue(where.has(at), `${at} is not an example`)
    const counts = ProtocolVersion.all.map((v) => [v, examples.filter((e) => e.version === v).length] as const)
    for (const [v, n] of counts) if (n === 0) console.log(`${v}: 0 messages found (no seed text quotes this revision)`)
    assert.deepStrictEqual(
      counts.filter(([, n]) => n > 0).map(([v]) => v),
      ["2024-11-05", "2025-03-26", "2025-06-18"]
    )
  })

  for (const version of ProtocolVersion.all) {
    const found = examples.filter((e) => e.version === version)
    if (found.length === 0) continue
    it.effect(`${version}: every quoted message decodes`, () =>
      Effect.sync(() => {
        const t = check(version, found)
        const rejected = found.filter((e) => invalid[e.at] !== undefined).length
        console.log(
          `${version}: ${found.length} messages found, ${found.length - rejected - t.failures.length} decoded` +
            (rejected > 0 ? `, ${rejected} known-invalid rejected` : "") +
            ` (${t.viaRegistry} requests/notifications via the registry, ${t.generic} generic envelopes, ` +
            `${t.results} results of which ${t.resultsOfKnownMethod} by their request's method, ${t.errors} errors)`
        )
        assert.deepStrictEqual(t.failures, [])
      })
    )
  }
})
