/**
 * 2026-07-28 `requestState` keys from configuration: two servers given the
 * same keys open each other's states (a retry may land on another replica);
 * servers with other keys, or the default per-server random key, refuse them
 * with -32602; rotation: the new key signs, the old one still opens until it
 * is dropped. Keys too short or missing are refused when configured.
 */
import { assert, describe, it } from "@effect/vitest"
import * as RequestStateKeys from "@effect-mcp/server/RequestStateKeys"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import type * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type Obj, testServer } from "./fixtures.ts"

const oldKey = "o".repeat(32)
const newKey = Redacted.make("n".repeat(40))
const otherKey = "x".repeat(32)

/** Two rounds: a name, then a confirmation; the second round needs the first's answer from requestState. */
const greet = Tool.make("greet", {
  input: Schema.Struct({ greeting: Schema.String }),
  handler: ({ greeting }) =>
    Effect.gen(function* () {
      const name = yield* Elicitation.form({ message: "Name?", schema: Schema.Struct({ name: Schema.String }) })
      const sure = yield* Elicitation.form({ message: "Sure?", schema: Schema.Struct({ ok: Schema.Boolean }) })
      if (name.action !== "accept" || sure.action !== "accept") return "declined"
      return `${greeting}, ${name.content.name} (${sure.content.ok})`
    })
})

const server = (options: Parameters<typeof testServer>[1] = {}) => testServer(Tool.layer(greet), options)

const connect = <E>(layer: Layer.Layer<McpServer.McpServer, E>) =>
  Effect.map(
    McpTest.connectRaw(layer, { revision: "2026-07-28", capabilities: { elicitation: { form: {} } } }),
    (connection) => connection.request
  )

type Request = Effect.Success<ReturnType<typeof connect<never>>>

const params = { name: "greet", arguments: { greeting: "Hello" } }
const accept = (content: object) => ({ action: "accept", content })

/** Round 1 on `first`, round 2 on `second`: returns round 2's requestState and the answers so far. */
const twoRounds = (first: Request, second: Request) =>
  Effect.gen(function* () {
    const round1 = (yield* first("tools/call", params)) as Obj
    assert.strictEqual(round1.resultType, "input_required")
    const [key1] = Object.keys(round1.inputRequests)
    const round2 = (yield* second("tools/call", {
      ...params,
      inputResponses: { [key1!]: accept({ name: "Ada" }) },
      requestState: round1.requestState
    })) as Obj
    assert.strictEqual(round2.resultType, "input_required", JSON.stringify(round2))
    const [key2] = Object.keys(round2.inputRequests)
    return { state: round2.requestState as string, inputResponses: { [key2!]: accept({ ok: true }) } }
  })

const finish = (request: Request, state: { readonly state: string; readonly inputResponses: object }) =>
  request("tools/call", { ...params, inputResponses: state.inputResponses, requestState: state.state })

const text = (result: unknown) => (result as Obj).content[0].text

describe("RequestStateKeys", () => {
  it.effect("servers sharing keys: the rounds of one call land on different servers and it succeeds", () =>
    Effect.gen(function* () {
      const a = yield* connect(server({ requestStateKeys: [oldKey] }))
      const b = yield* connect(server({ requestStateKeys: [oldKey] }))
      const state = yield* twoRounds(a, b)
      assert.strictEqual(text(yield* finish(a, state)), "Hello, Ada (true)")
    })
  )

  it.effect("a server with another key, or the default random key, refuses the state with -32602", () =>
    Effect.gen(function* () {
      const a = yield* connect(server({ requestStateKeys: [oldKey] }))
      const state = yield* twoRounds(a, a)
      for (const other of [server({ requestStateKeys: [otherKey] }), server()]) {
        const error = (yield* Effect.flip(finish(yield* connect(other), state))) as Obj
        assert.strictEqual(error.code, -32602)
        assert.include(error.message, "requestState failed verification")
      }
      // Two default servers have two random keys: a state of one never opens on the other.
      const d1 = yield* connect(server())
      const d2 = yield* connect(server())
      const error = (yield* Effect.flip(twoRounds(d1, d2))) as Obj
      assert.strictEqual(error.code, -32602)
    })
  )

  it.effect(
    "rotation: the new key signs, a state sealed under the old key still opens, then the old key is dropped",
    () =>
      Effect.gen(function* () {
        const before = yield* connect(server({ requestStateKeys: [oldKey] }))
        const rotated = yield* connect(server({ requestStateKeys: [newKey, oldKey] }))
        const onlyNew = yield* connect(server({ requestStateKeys: [newKey] }))
        const onlyOld = yield* connect(server({ requestStateKeys: [oldKey] }))
        // Sealed by the old key: the rotated server opens it (and reseals with the new key).
        const sealedOld = yield* twoRounds(before, rotated)
        assert.strictEqual(text(yield* finish(rotated, sealedOld)), "Hello, Ada (true)")
        // Sealed by the rotated server: its first key signed, so a server with only the new key opens it...
        const sealedNew = yield* twoRounds(rotated, rotated)
        assert.strictEqual(text(yield* finish(onlyNew, sealedNew)), "Hello, Ada (true)")
        // ...and one with only the old key does not.
        assert.strictEqual(((yield* Effect.flip(finish(onlyOld, sealedNew))) as Obj).code, -32602)
        // Once the old key is dropped, its states are refused.
        assert.strictEqual(
          ((yield* Effect.flip(finish(onlyNew, yield* twoRounds(before, before)))) as Obj).code,
          -32602
        )
      })
  )

  it.effect("the RequestStateKeys service (from configuration) sets the keys of every server it is given to", () =>
    Effect.gen(function* () {
      const provider = ConfigProvider.fromEnv({
        env: { MCP_REQUEST_STATE_KEYS: ` ${newKey.pipe(Redacted.value)} , ${oldKey}` }
      })
      const keys = RequestStateKeys.layerConfig().pipe(Layer.provide(ConfigProvider.layer(provider)))
      const configured = (yield* Effect.provide(
        Effect.gen(function* () {
          return yield* RequestStateKeys.RequestStateKeys
        }),
        keys
      )).length
      assert.strictEqual(configured, 2)
      const a = yield* connect(server().pipe(Layer.provide(keys)))
      const b = yield* connect(server({ requestStateKeys: [newKey] }))
      // The configured list signs with its first key: a server holding only that key opens the state.
      assert.strictEqual(text(yield* finish(b, yield* twoRounds(a, a))), "Hello, Ada (true)")
    })
  )

  it("keys are checked: none, or shorter than 32 bytes, is an error that never quotes the key", () => {
    assert.instanceOf(RequestStateKeys.toBytes([]), RequestStateKeys.RequestStateKeyError)
    const short = RequestStateKeys.toBytes([oldKey, "secret-but-short"])
    assert.instanceOf(short, RequestStateKeys.RequestStateKeyError)
    assert.notInclude((short as RequestStateKeys.RequestStateKeyError).message, "secret")
    assert.include((short as RequestStateKeys.RequestStateKeyError).message, "key 2 of 2")
    assert.deepStrictEqual(
      RequestStateKeys.parse(" a,, b ,").map((key) => Redacted.value(key)),
      ["a", "b"]
    )
    // A 32-byte key of multi-byte characters is long enough in bytes.
    assert.notInstanceOf(RequestStateKeys.toBytes(["é".repeat(16)]), RequestStateKeys.RequestStateKeyError)
  })
})
