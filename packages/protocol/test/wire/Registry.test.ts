import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import type { MethodSpec, RequestSpec } from "@effect-mcp/protocol/Revision"
import { Effect, Exit, Schema } from "effect"
import * as v2024_11_05 from "../../src/internal/wire/v2024_11_05.ts"
import * as v2025_03_26 from "../../src/internal/wire/v2025_03_26.ts"
import { wire } from "./specFiles.ts"

const method = (version: ProtocolVersion.ProtocolVersion, name: string): MethodSpec => {
  const spec = Registry.get(version).methods.get(name)
  assert.isDefined(spec, `${version} has no ${name}`)
  return spec!
}

const request = (version: ProtocolVersion.ProtocolVersion, name: string): RequestSpec => {
  const spec = method(version, name)
  assert.strictEqual(spec._tag, "Request")
  return spec as RequestSpec
}

const accepts = (schema: Schema.Top, value: unknown): boolean =>
  Exit.isSuccess(Schema.decodeUnknownExit(schema as Schema.Codec<unknown, unknown>)(value))

const names = (version: ProtocolVersion.ProtocolVersion, tag: MethodSpec["_tag"]) =>
  [...Registry.get(version).methods.values()]
    .filter((m) => m._tag === tag)
    .map((m) => m.method)
    .sort()

const statefulCore = [
  "completion/complete",
  "initialize",
  "logging/setLevel",
  "ping",
  "prompts/get",
  "prompts/list",
  "resources/list",
  "resources/read",
  "resources/subscribe",
  "resources/templates/list",
  "resources/unsubscribe",
  "roots/list",
  "sampling/createMessage",
  "tools/call",
  "tools/list"
]

describe("Registry", () => {
  it("lists every revision, oldest first, and caches each", () => {
    assert.deepStrictEqual(
      Registry.all.map((r) => r.version),
      [...ProtocolVersion.all]
    )
    for (const r of Registry.all) assert.strictEqual(Registry.get(r.version), r)
  })

  it("builds each revision's method tables once: later reads return the same tables and specs", () => {
    for (const r of Registry.all) {
      const methods = r.methods
      assert.strictEqual(r.methods, methods)
      assert.strictEqual(r.inputRequests, r.inputRequests)
      assert.strictEqual(r.methods.get("tools/call"), methods.get("tools/call"))
      assert.isDefined(methods.get("tools/call"))
    }
  })

  it("flags: only 2026-07-28 is stateless, only 2025-03-26 has batches", () => {
    assert.deepStrictEqual(
      Registry.all.filter((r) => r.stateless).map((r) => r.version),
      ["2026-07-28"]
    )
    assert.deepStrictEqual(
      Registry.all.filter((r) => r.batches).map((r) => r.version),
      ["2025-03-26"]
    )
  })

  it("has exactly the requests each revision defines", () => {
    // The Skills extension (SEP-2640) is carried by every revision.
    const stateful = [...statefulCore, "resources/directory/read", "skills/get", "skills/list"].sort()
    assert.deepStrictEqual(names("2024-11-05", "Request"), stateful)
    assert.deepStrictEqual(names("2025-03-26", "Request"), stateful)
    assert.deepStrictEqual(names("2025-06-18", "Request"), [...stateful, "elicitation/create"].sort())
    assert.deepStrictEqual(
      names("2025-11-25", "Request"),
      [...stateful, "elicitation/create", "tasks/cancel", "tasks/get", "tasks/list", "tasks/result"].sort()
    )
    assert.deepStrictEqual(names("2026-07-28", "Request"), [
      "completion/complete",
      "prompts/get",
      "prompts/list",
      "resources/directory/read",
      "resources/list",
      "resources/read",
      "resources/templates/list",
      "server/discover",
      "skills/get",
      "skills/list",
      "subscriptions/listen",
      // The Tasks extension (SEP-2663), carried beside the revision's own methods.
      "tasks/cancel",
      "tasks/get",
      "tasks/update",
      "tools/call",
      "tools/list"
    ])
    assert.deepStrictEqual([...Registry.get("2026-07-28").inputRequests.keys()].sort(), [
      "elicitation/create",
      "roots/list",
      "sampling/createMessage"
    ])
    assert.strictEqual(Registry.get("2025-11-25").inputRequests.size, 0)
  })

  it("has exactly the notifications each revision defines", () => {
    const common = [
      "notifications/cancelled",
      "notifications/message",
      "notifications/progress",
      "notifications/prompts/list_changed",
      "notifications/resources/list_changed",
      "notifications/resources/updated",
      "notifications/tools/list_changed"
    ]
    const stateful = [...common, "notifications/initialized", "notifications/roots/list_changed"].sort()
    assert.deepStrictEqual(names("2024-11-05", "Notification"), stateful)
    assert.deepStrictEqual(names("2025-06-18", "Notification"), stateful)
    assert.deepStrictEqual(
      names("2025-11-25", "Notification"),
      [...stateful, "notifications/elicitation/complete", "notifications/tasks/status"].sort()
    )
    assert.deepStrictEqual(
      names("2026-07-28", "Notification"),
      [...common, "notifications/subscriptions/acknowledged", "notifications/tasks"].sort()
    )
  })

  it("knows who sends what", () => {
    for (const v of ["2024-11-05", "2025-06-18", "2025-11-25"] as const) {
      assert.strictEqual(method(v, "ping").sender, "both")
      assert.strictEqual(method(v, "notifications/cancelled").sender, "both")
      assert.strictEqual(method(v, "notifications/progress").sender, "both")
      assert.strictEqual(method(v, "tools/call").sender, "client")
      assert.strictEqual(method(v, "sampling/createMessage").sender, "server")
      assert.strictEqual(method(v, "notifications/initialized").sender, "client")
    }
    assert.strictEqual(method("2025-11-25", "tasks/get").sender, "both")
    // 2026-07-28: clients only cancel; servers also cancel (to end a subscriptions/listen stream on stdio).
    assert.strictEqual(method("2026-07-28", "notifications/cancelled").sender, "both")
    assert.strictEqual(method("2026-07-28", "notifications/progress").sender, "server")
    assert.strictEqual(Registry.get("2026-07-28").inputRequests.get("elicitation/create")?.sender, "server")
  })

  it("gates methods on capabilities", () => {
    assert.deepStrictEqual(request("2025-06-18", "tools/call").capability, { side: "server", path: ["tools"] })
    assert.deepStrictEqual(request("2024-11-05", "resources/subscribe").capability, {
      side: "server",
      path: ["resources", "subscribe"]
    })
    assert.deepStrictEqual(request("2025-06-18", "logging/setLevel").capability, { side: "server", path: ["logging"] })
    assert.isUndefined(request("2024-11-05", "completion/complete").capability)
    assert.deepStrictEqual(request("2025-03-26", "completion/complete").capability, {
      side: "server",
      path: ["completions"]
    })
    assert.deepStrictEqual(request("2025-06-18", "elicitation/create").capability, {
      side: "client",
      path: ["elicitation"]
    })
    assert.deepStrictEqual(request("2024-11-05", "roots/list").capability, { side: "client", path: ["roots"] })
    assert.deepStrictEqual(request("2025-11-25", "tasks/list").capability, {
      side: "receiver",
      path: ["tasks", "list"]
    })
    assert.deepStrictEqual(Registry.get("2026-07-28").inputRequests.get("sampling/createMessage")?.capability, {
      side: "client",
      path: ["sampling"]
    })
    assert.deepStrictEqual(method("2025-06-18", "notifications/tools/list_changed").capability, {
      side: "server",
      path: ["tools", "listChanged"]
    })
    for (const ungated of ["ping", "initialize", "notifications/cancelled", "notifications/progress"]) {
      assert.isUndefined(method("2025-06-18", ungated).capability, ungated)
    }
  })

  it("knows whether params are required", () => {
    assert.isFalse(request("2024-11-05", "tools/list").paramsRequired)
    assert.isTrue(request("2024-11-05", "tools/call").paramsRequired)
    // 2026-07-28 requests always carry params._meta (protocol version, client capabilities).
    assert.isTrue(request("2026-07-28", "tools/list").paramsRequired)
  })

  it.effect("params schemas decode what the method takes", () =>
    Effect.sync(() => {
      const params = request("2025-06-18", "tools/call").params
      assert.isTrue(accepts(params, { name: "echo", arguments: { text: "hi" } }))
      assert.isFalse(accepts(params, { arguments: {} }))
      assert.isTrue(accepts(request("2024-11-05", "ping").params, { _meta: { progressToken: 1 } }))
      assert.isFalse(accepts(request("2026-07-28", "tools/list").params, {}))
    })
  )

  it.effect("result schemas: EmptyResult, task-augmented and input-required results", () =>
    Effect.sync(() => {
      const ping = request("2024-11-05", "ping").result
      assert.strictEqual(ping, wire["2024-11-05"]["EmptyResult"])
      assert.deepStrictEqual(Schema.decodeUnknownSync(ping as Schema.Codec<unknown>)({ extra: 1 }), { extra: 1 })

      const task = { taskId: "t", status: "working", createdAt: "x", lastUpdatedAt: "x", ttl: null }
      assert.isTrue(accepts(request("2025-11-25", "tools/call").result, { task }))
      assert.isFalse(accepts(request("2025-06-18", "tools/call").result, { task }))

      const callTool = request("2026-07-28", "tools/call").result
      const complete = { resultType: "complete", content: [{ type: "text", text: "hi" }] }
      assert.deepStrictEqual(Schema.decodeUnknownSync(callTool as Schema.Codec<unknown>)(complete), complete)
      const inputRequired = {
        resultType: "input_required",
        inputRequests: { a: { method: "roots/list" } },
        requestState: "s"
      }
      assert.deepStrictEqual(Schema.decodeUnknownSync(callTool as Schema.Codec<unknown>)(inputRequired), inputRequired)
      assert.isFalse(accepts(request("2026-07-28", "tools/list").result, inputRequired))
    })
  )

  it("an unchanged definition is one schema across revisions; a changed one is not", () => {
    assert.strictEqual(wire["2025-03-26"]["Role"], wire["2024-11-05"]["Role"])
    assert.strictEqual(wire["2026-07-28"]["Role"], wire["2024-11-05"]["Role"])
    assert.notStrictEqual(wire["2025-06-18"]["CallToolResult"], wire["2025-03-26"]["CallToolResult"])
    assert.strictEqual(request("2025-03-26", "ping").params, request("2024-11-05", "ping").params)
  })

  it("a revision's schemas are built once, on first use", () => {
    // The method tables hand out the wire module's memoized schemas (and their compiled decoders).
    assert.strictEqual(v2025_03_26.definitions().Role, v2025_03_26.definitions().Role)
    assert.strictEqual(
      request("2025-03-26", "initialize").params,
      v2025_03_26.definitions().InitializeRequest.fields.params
    )
    assert.strictEqual(request("2025-03-26", "initialize").result, request("2025-03-26", "initialize").result)
  })

  it("a spec hands out the schemas its wire module's thunks build, memoized", () => {
    const before = v2024_11_05.requests.find((r) => r.method === "completion/complete")
    assert.isDefined(before)
    // The thunks build on call, memoized: the spec's schema is the one the thunk returns.
    assert.strictEqual(request("2024-11-05", "completion/complete").params, before!.params())
    assert.strictEqual(request("2024-11-05", "completion/complete").result, before!.result())
  })
})
