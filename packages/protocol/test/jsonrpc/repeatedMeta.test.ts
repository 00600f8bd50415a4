import { assert, describe, it } from "@effect/vitest"
import * as FrozenJson from "@effect-mcp/protocol/FrozenJson"
import * as IncomingValidator from "@effect-mcp/protocol/IncomingValidator"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Registry from "@effect-mcp/protocol/Registry"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import * as Jit from "../../src/internal/jit.ts"
import * as RepeatedMeta from "../../src/internal/repeatedMeta.ts"

// The stateless revision's `tools/call` params: `_meta` is required and repeats from request to request.
const callTool = Registry.get("2026-07-28").methods.get("tools/call")!.params as Revision.AnyCodec

const meta = (name = "client") => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
  "io.modelcontextprotocol/clientInfo": { name, version: "1.0.0" }
})

/** Plain decoders that count their runs, per schema. */
const counting = () => {
  const runs = new Map<Revision.AnyCodec, number>()
  const decoderFor = (schema: Revision.AnyCodec): RepeatedMeta.Decoder => {
    const decode = SchemaParser.decodeUnknownResult(schema)
    return (input) => {
      runs.set(schema, (runs.get(schema) ?? 0) + 1)
      return decode(input) as Result.Result<unknown, SchemaIssue.Issue>
    }
  }
  const metaSchema = (callTool as unknown as { readonly fields: Schema.Struct.Fields }).fields
    ._meta as Revision.AnyCodec
  return { decoderFor, metaRuns: () => runs.get(metaSchema) ?? 0, wholeRuns: () => runs.get(callTool) ?? 0 }
}

const ok = (result: Result.Result<unknown, SchemaIssue.Issue>) => {
  if (Result.isFailure(result)) throw new Error(`expected success, got ${String(result.failure)}`)
  return result.success as { readonly name: string; readonly _meta: unknown }
}

describe("RepeatedMeta", () => {
  it.effect("a `_meta` equal to one already decoded is not decoded again; its decoded value is shared and frozen", () =>
    Effect.sync(() => {
      const { decoderFor, metaRuns, wholeRuns } = counting()
      const decode = RepeatedMeta.decoder(callTool, decoderFor)!
      const first = ok(decode({ name: "a", arguments: { x: 1 }, _meta: meta() }))
      const second = ok(decode({ name: "b", _meta: meta() }))
      assert.strictEqual(metaRuns(), 1)
      assert.strictEqual(wholeRuns(), 0)
      assert.strictEqual(second.name, "b")
      assert.strictEqual(second._meta, first._meta)
      assert.deepStrictEqual(first._meta, meta())
      assert.isTrue(Object.isFrozen(first._meta))
      assert.isTrue(Object.isFrozen((first._meta as Record<string, object>)["io.modelcontextprotocol/clientInfo"]))
    })
  )

  it.effect("the result equals the whole schema's, for every input", () =>
    Effect.sync(() => {
      const { decoderFor } = counting()
      const decode = RepeatedMeta.decoder(callTool, decoderFor)!
      const whole = SchemaParser.decodeUnknownResult(callTool)
      const inputs: ReadonlyArray<unknown> = [
        { name: "a", arguments: { x: 1 }, _meta: meta() },
        { name: "a", arguments: { x: 1 }, _meta: meta() },
        { name: "a", _meta: { ...meta(), progressToken: 7 } },
        { name: "a", _meta: { ...meta(), "io.modelcontextprotocol/protocolVersion": 1 } },
        { name: 2, _meta: meta() },
        { name: "a" },
        { name: "a", _meta: "nope" },
        { name: "a", _meta: { ...meta(), at: new Date(0) } }
      ]
      for (const input of inputs) {
        const mine = decode(input)
        const theirs = whole(input) as Result.Result<unknown, SchemaIssue.Issue>
        assert.strictEqual(mine._tag, theirs._tag, JSON.stringify(input))
        if (Result.isSuccess(mine) && Result.isSuccess(theirs)) assert.deepStrictEqual(mine.success, theirs.success)
        if (Result.isFailure(mine) && Result.isFailure(theirs))
          assert.strictEqual(String(mine.failure), String(theirs.failure))
      }
    })
  )

  it.effect("what it remembers is a private copy: changing the input afterwards changes nothing", () =>
    Effect.sync(() => {
      const { decoderFor, metaRuns } = counting()
      const decode = RepeatedMeta.decoder(callTool, decoderFor)!
      const shared = meta()
      ok(decode({ name: "a", _meta: shared }))
      ;(shared["io.modelcontextprotocol/clientInfo"] as { name: string }).name = "changed"
      const again = ok(decode({ name: "a", _meta: meta() }))
      assert.strictEqual(metaRuns(), 1)
      assert.deepStrictEqual(again._meta, meta())
      const changed = ok(decode({ name: "a", _meta: shared }))
      assert.strictEqual(metaRuns(), 2)
      assert.deepStrictEqual(changed._meta, shared)
    })
  )

  it.effect("a few clients taking turns are each remembered; a fifth pushes out the oldest", () =>
    Effect.sync(() => {
      const { decoderFor, metaRuns } = counting()
      const decode = RepeatedMeta.decoder(callTool, decoderFor)!
      for (const name of ["a", "b", "c", "d", "a", "b", "c", "d"]) ok(decode({ name: "t", _meta: meta(name) }))
      assert.strictEqual(metaRuns(), 4)
      ok(decode({ name: "t", _meta: meta("e") }))
      ok(decode({ name: "t", _meta: meta("a") }))
      assert.strictEqual(metaRuns(), 6)
    })
  )

  it.effect("a `_meta` that is not plain JSON, or too large, is decoded every time", () =>
    Effect.sync(() => {
      const { decoderFor, wholeRuns } = counting()
      const decode = RepeatedMeta.decoder(callTool, decoderFor)!
      const large = {
        ...meta(),
        "io.modelcontextprotocol/clientCapabilities": {
          experimental: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, {}]))
        }
      }
      for (let i = 0; i < 2; i++) ok(decode({ name: "a", _meta: large }))
      assert.strictEqual(wholeRuns(), 2)
    })
  )

  it.effect("params whose `_meta` is optional keep the schema's own decoder", () =>
    Effect.sync(() => {
      const optional = Registry.get("2025-11-25").methods.get("tools/call")!.params as Revision.AnyCodec
      assert.isUndefined(RepeatedMeta.decoder(optional, counting().decoderFor))
      assert.isUndefined(RepeatedMeta.decoder(Schema.String as Revision.AnyCodec, counting().decoderFor))
    })
  )

  it.effect("through the validator: a stateless request's decoded `_meta` is read-only", () =>
    Effect.sync(() => {
      const validator = IncomingValidator.make(Registry.get("2026-07-28"), { receiver: "server" })
      const validated = validator.validate(JsonRpc.request(1, "tools/call", { name: "echo", _meta: meta() }))
      if (Result.isFailure(validated)) throw new Error(validated.failure.message)
      const params = validated.success.params as { readonly _meta: object }
      assert.deepStrictEqual(params._meta, meta())
      assert.isTrue(Object.isFrozen(params._meta))
    })
  )

  it.effect("the params without their `_meta` are compiled when the params are, and only then", () =>
    Effect.sync(() => {
      const rests = (schema: Revision.AnyCodec) => {
        const seen: Array<Revision.AnyCodec> = []
        RepeatedMeta.decoder(schema, (s) => {
          seen.push(s)
          return counting().decoderFor(s)
        })
        // The schemas the memo made decoders for, other than the whole params and their `_meta`.
        const fields = (schema as unknown as { readonly fields: Schema.Struct.Fields }).fields
        return seen.filter((s) => s !== schema && s !== fields._meta)
      }
      // The registry compiles what it hands out (tools/call is decoded on every call).
      assert.isTrue(Jit.isCompiled(callTool))
      const [compiledRest] = rests(callTool)
      assert.isDefined(compiledRest)
      assert.isTrue(Jit.isCompiled(compiledRest!))
      const plain = Schema.Struct({ name: Schema.String, _meta: Schema.Struct({ a: Schema.String }) })
      const [plainRest] = rests(plain as unknown as Revision.AnyCodec)
      assert.isDefined(plainRest)
      assert.isFalse(Jit.isCompiled(plainRest!))
    })
  )

  it.effect("the very `_meta` remembered is taken as it is only when it can never change", () =>
    Effect.sync(() => {
      const { decoderFor, metaRuns } = counting()
      const decode = RepeatedMeta.decoder(callTool, decoderFor)!
      // Frozen all the way down, as an in-process client sends it: the same object is the same value.
      const frozen = FrozenJson.copy(meta())!.value as Record<string, unknown>
      const first = ok(decode({ name: "a", _meta: frozen }))
      ok(decode({ name: "b", _meta: frozen }))
      assert.strictEqual(metaRuns(), 1)
      assert.deepStrictEqual(first._meta, meta())
      // Not frozen: the same object, changed since, is compared again and decoded anew.
      const open = meta("before")
      ok(decode({ name: "c", _meta: open }))
      ;(open["io.modelcontextprotocol/clientInfo"] as { name: string }).name = "after"
      const changed = ok(decode({ name: "d", _meta: open }))
      assert.strictEqual(
        (changed._meta as Record<string, { readonly name: string }>)["io.modelcontextprotocol/clientInfo"]!.name,
        "after"
      )
      assert.strictEqual(metaRuns(), 3)
    })
  )
})
