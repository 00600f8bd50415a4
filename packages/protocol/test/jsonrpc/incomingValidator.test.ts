import { assert, describe, it } from "@effect/vitest"
import * as IncomingValidator from "@effect-mcp/protocol/IncomingValidator"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Registry from "@effect-mcp/protocol/Registry"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { withBatches, withoutBatches } from "./fixture.ts"

const failure = (result: Result.Result<IncomingValidator.Validated, IncomingValidator.ValidationError>) => {
  if (Result.isSuccess(result)) throw new Error("expected a validation failure")
  return result.failure
}

const success = (result: Result.Result<IncomingValidator.Validated, IncomingValidator.ValidationError>) => {
  if (Result.isFailure(result)) throw new Error(`expected success, got ${result.failure.message}`)
  return result.success
}

describe("IncomingValidator (fixture revision)", () => {
  const server = IncomingValidator.make(withoutBatches, { receiver: "server" })

  it.effect("passes a valid request and returns its spec and decoded params", () =>
    Effect.sync(() => {
      const validated = success(
        server.validate(JsonRpc.request(1, "tools/call", { name: "echo", arguments: { a: 1 } }))
      )
      assert.strictEqual(validated.spec.method, "tools/call")
      assert.deepStrictEqual(validated.params, { name: "echo", arguments: { a: 1 } })
    })
  )

  it.effect("absent optional params stay undefined", () =>
    Effect.sync(() => {
      assert.strictEqual(success(server.validate(JsonRpc.request(1, "ping"))).params, undefined)
      assert.strictEqual(success(server.validate(JsonRpc.notification("notifications/initialized"))).params, undefined)
    })
  )

  it.effect("names the failing path in the InvalidParams message and data", () =>
    Effect.sync(() => {
      const error = failure(
        server.validate(JsonRpc.request(1, "tools/call", { name: "x", arguments: { a: 1 }, _meta: 5 }))
      )
      assert.strictEqual(error._tag, "InvalidParams")
      assert.strictEqual(error.code, -32602)
      assert.strictEqual(error.message, "Invalid params for tools/call: Expected object at params._meta")
      assert.deepStrictEqual(error.data, { issues: [{ path: "params._meta", message: "Expected object" }] })
      const nested = failure(
        server.validate(
          JsonRpc.request(2, "initialize", { protocolVersion: "x", capabilities: {}, clientInfo: { name: "c" } })
        )
      )
      assert.include(nested.message, "params.clientInfo.version")
    })
  )

  it.effect("rejects array params even on a method whose params are optional", () =>
    Effect.sync(() => {
      const error = failure(server.validate(JsonRpc.request(1, "tools/list", [])))
      assert.strictEqual(error._tag, "InvalidParams")
      assert.include(error.message, "not an array")
    })
  )

  it.effect("the receiver option turns methods the receiver itself sends into MethodNotFound", () =>
    Effect.sync(() => {
      const message = JsonRpc.request(1, "sampling/createMessage", { messages: [] })
      assert.strictEqual(failure(server.validate(message))._tag, "MethodNotFound")
      const client = IncomingValidator.make(withoutBatches, { receiver: "client" })
      assert.isTrue(Result.isSuccess(client.validate(message)))
      assert.strictEqual(failure(client.validate(JsonRpc.request(2, "tools/list")))._tag, "MethodNotFound")
      // Without a receiver, direction is not checked.
      assert.isTrue(Result.isSuccess(IncomingValidator.make(withoutBatches).validate(message)))
      // "both" passes either way.
      assert.isTrue(Result.isSuccess(client.validate(JsonRpc.request(3, "ping"))))
    })
  )

  it.effect("batches: refused where the revision has none, allowed otherwise; initialize refused inside one", () =>
    Effect.sync(() => {
      const refused = server.validateBatch([JsonRpc.request(1, "ping")])
      assert.isTrue(Result.isFailure(refused))
      if (Result.isFailure(refused)) {
        assert.strictEqual(refused.failure._tag, "InvalidRequest")
        assert.include(refused.failure.message, "2025-06-18")
      }
      const batching = IncomingValidator.make(withBatches, { receiver: "server" })
      assert.isTrue(Result.isSuccess(batching.validateBatch([JsonRpc.request(1, "ping")])))
      const initialize = JsonRpc.request(1, "initialize", {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "c", version: "1" }
      })
      assert.isTrue(Result.isSuccess(batching.validate(initialize)))
      assert.strictEqual(failure(batching.validate(initialize, { inBatch: true }))._tag, "InvalidRequest")
    })
  )

  it.effect("a schema that throws while decoding becomes InternalError, not an exception", () =>
    Effect.sync(() => {
      const Exploding = Schema.Struct({}).pipe(
        Schema.check(
          Schema.makeFilter(() => {
            throw new Error("schema bug")
          })
        )
      )
      const broken: Revision.RevisionSpec = {
        ...withoutBatches,
        methods: new Map([
          [
            "boom",
            {
              _tag: "Notification",
              method: "boom",
              sender: "both",
              params: Exploding,
              paramsRequired: true,
              capability: undefined
            }
          ]
        ])
      }
      const error = failure(IncomingValidator.make(broken).validate(JsonRpc.notification("boom", {})))
      assert.strictEqual(error._tag, "InternalError")
      assert.strictEqual(error.code, -32603)
    })
  )
})

describe("IncomingValidator (Registry)", () => {
  const on = (version: Parameters<typeof Registry.get>[0]) =>
    IncomingValidator.make(Registry.get(version), { receiver: "server" })

  it.effect("2025-03-26: tools/call validated against the wire schema", () =>
    Effect.sync(() => {
      const validator = on("2025-03-26")
      const validated = success(validator.validate(JsonRpc.request(1, "tools/call", { name: "echo", arguments: {} })))
      assert.strictEqual(validated.spec._tag, "Request")
      assert.strictEqual((validated.params as { readonly name: string }).name, "echo")
      const missing = failure(validator.validate(JsonRpc.request(2, "tools/call", { arguments: {} })))
      assert.strictEqual(missing._tag, "InvalidParams")
      assert.include(missing.message, "params.name")
      assert.strictEqual(failure(validator.validate(JsonRpc.request(3, "tools/call")))._tag, "InvalidParams")
      assert.strictEqual(failure(validator.validate(JsonRpc.request(4, "tools/call", ["echo"])))._tag, "InvalidParams")
    })
  )

  it.effect("batches exist only on 2025-03-26, and initialize may not be in one", () =>
    Effect.sync(() => {
      const allowed = Registry.all.map((spec) =>
        Result.isSuccess(IncomingValidator.make(spec).validateBatch([JsonRpc.request(1, "ping")]))
      )
      assert.deepStrictEqual(allowed, [false, true, false, false, false])
      const initialize = JsonRpc.request(1, "initialize", {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "c", version: "1" }
      })
      assert.isTrue(Result.isSuccess(on("2025-03-26").validate(initialize)))
      assert.strictEqual(failure(on("2025-03-26").validate(initialize, { inBatch: true }))._tag, "InvalidRequest")
    })
  )

  it.effect("methods follow the revision's table", () =>
    Effect.sync(() => {
      // elicitation/create arrived in 2025-06-18; it is the client that receives it.
      const elicit = JsonRpc.request(1, "elicitation/create", {
        message: "name?",
        requestedSchema: { type: "object", properties: {} }
      })
      const client = (version: Parameters<typeof Registry.get>[0]) =>
        IncomingValidator.make(Registry.get(version), { receiver: "client" })
      assert.strictEqual(failure(client("2025-03-26").validate(elicit))._tag, "MethodNotFound")
      assert.isTrue(Result.isSuccess(client("2025-06-18").validate(elicit)))
      // 2026-07-28 is stateless: no initialize, no ping.
      assert.strictEqual(failure(on("2026-07-28").validate(JsonRpc.request(1, "ping")))._tag, "MethodNotFound")
      assert.strictEqual(
        failure(on("2026-07-28").validate(JsonRpc.request(1, "initialize", {})))._tag,
        "MethodNotFound"
      )
    })
  )

  it.effect("a notification with invalid params is reported (the engine drops it)", () =>
    Effect.sync(() => {
      const error = failure(
        on("2025-06-18").validate(JsonRpc.notification("notifications/cancelled", { requestId: {} }))
      )
      assert.strictEqual(error._tag, "InvalidParams")
    })
  )

  // Found under attack (issue 12, 11): an accepted form answering a NumberSchema field with a fraction was
  // refused on 2026-07-28 (schema.json types answers `integer`), and the union's real reason came third.
  const stateless = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {}
  }
  const answered = (score: unknown) =>
    JsonRpc.request(1, "tools/call", {
      _meta: stateless,
      name: "survey",
      arguments: {},
      inputResponses: { "elicitation-0": { action: "accept", content: { score } } }
    })

  it.effect("2026-07-28: an elicitation answer may be a non-integer number", () =>
    Effect.sync(() => {
      const validated = success(on("2026-07-28").validate(answered(95.5)))
      const params = validated.params as { readonly inputResponses: Record<string, { readonly content: object }> }
      assert.deepStrictEqual(params.inputResponses["elicitation-0"]!.content, { score: 95.5 })
    })
  )

  it.effect("every revision with elicitation decodes a fractional answer in the elicitation/create result", () =>
    Effect.sync(() => {
      for (const version of ["2025-06-18", "2025-11-25", "2026-07-28"] as const) {
        const spec =
          Registry.get(version).inputRequests.get("elicitation/create") ??
          Registry.get(version).methods.get("elicitation/create")
        assert.isDefined(spec, version)
        const result = spec!._tag === "Request" ? spec!.result : undefined
        const decoded = Schema.decodeUnknownSync(result as Schema.Codec<unknown>)({
          action: "accept",
          content: { score: 95.5 }
        })
        assert.deepStrictEqual((decoded as { readonly content: object }).content, { score: 95.5 }, version)
      }
    })
  )

  it.effect("a union's decode error leads with the member that matched furthest", () =>
    Effect.sync(() => {
      const error = failure(on("2026-07-28").validate(answered({ nested: 1 })))
      assert.strictEqual(error._tag, "InvalidParams")
      const issues = (error.data as { readonly issues: ReadonlyArray<{ readonly path: string }> }).issues
      assert.strictEqual(issues[0]!.path, "params.inputResponses.elicitation-0.content.score")
      assert.match(
        error.message,
        /^Invalid params for tools\/call: [^;]* at params\.inputResponses\.elicitation-0\.content\.score;/
      )
      assert.isAbove(issues.length, 1)
    })
  )
})
