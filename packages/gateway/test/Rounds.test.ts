/**
 * 2026-07-28 input rounds through the gateway in memory: a stateless client
 * of a stateless upstream gets the upstream's rounds as they are (its keys,
 * every ask of a round at once), its retries reach the upstream's retries
 * (answers and the upstream's own state), the upstream's refusal for want of
 * a capability reaches it, and progress is relayed; a 2025-11-25 client is
 * asked on its session, and a stateless client of a 2025-11-25 upstream in
 * rounds of the gateway's own, as before.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Gateway from "../src/Gateway.ts"
import { gatewayOver } from "./memoryConnector.ts"

/** A form of one string field `name`, under the ask key `key`. */
const askName = (key: string, message: string) =>
  Elicitation.request(
    { message, requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
    { key }
  ).pipe(Effect.map((answer) => String((answer.content as { readonly name?: unknown } | undefined)?.name)))

/**
 * The upstream: `pair` asks two things at once, `steps` one per round, `progress` reports before it answers;
 * reading `test://up/secret` asks for a password first.
 */
const upstream = Layer.mergeAll(
  Resource.layer(
    Resource.make({
      uri: "test://up/secret",
      name: "secret",
      read: Effect.map(askName("password", "Password?"), (password) => `the secret, for ${password}`)
    })
  ),
  Tool.layer(
    Tool.make("pair", {
      input: Schema.Struct({}),
      handler: () =>
        Effect.map(
          Effect.all([askName("first", "First?"), askName("second", "Second?")], { concurrency: "unbounded" }),
          ([a, b]) => `${a} & ${b}`
        )
    }),
    Tool.make("steps", {
      input: Schema.Struct({}),
      handler: () =>
        Effect.gen(function* () {
          const a = yield* askName("step1", "Step 1?")
          const b = yield* askName("step2", "Step 2?")
          return `${a} then ${b}`
        })
    }),
    Tool.make("progress", {
      input: Schema.Struct({}),
      handler: () => Effect.as(ServerRequest.progress({ progress: 1, total: 2 }), "done")
    })
  )
).pipe(Layer.provideMerge(McpServer.layer({ name: "up", version: "1.0.0" })))

/** The gateway in front of the upstream, its connection on `options`' revisions (default: 2026-07-28). */
const gatewayOn = (options: Partial<Gateway.Options> = {}) => gatewayOver(upstream, options)

const gateway = gatewayOn()

/** What the gateway answers, as far as these tests read it. */
interface Obj {
  readonly resultType?: string
  readonly inputRequests: { readonly [key: string]: { readonly params: { readonly message?: string } } }
  readonly requestState: string
  readonly content: Tools.CallToolResult["content"]
  readonly code: number
  readonly data: { readonly requiredCapabilities: { readonly [key: string]: unknown } }
}

const accept = (value: string) => ({ action: "accept", content: { name: value } })

const stateless = (
  context: Context.Context<McpServer.McpServer>,
  capabilities: { readonly [key: string]: unknown } = { elicitation: {} }
) => McpTest.makeRawClient({ revision: "2026-07-28", capabilities }).pipe(Effect.provideContext(context))

/** The retry of `call` answering `round` with `inputResponses`. */
const answer = (client: McpTest.RawClient, call: object, inputResponses: object, round: Obj) =>
  Effect.map(
    client.request("tools/call", { ...call, inputResponses, requestState: round.requestState }),
    (result) => result as Obj
  )

const textOf = (result: Pick<Obj, "content">) => result.content.map((b) => (b.type === "text" ? b.text : "")).join("")

describe("Gateway: 2026-07-28 input rounds", () => {
  it.effect("a round's asks reach the client at once under the upstream's keys; the retry completes it", () =>
    Effect.gen(function* () {
      const client = yield* stateless(yield* gateway)
      const round = (yield* client.request("tools/call", { name: "pair", arguments: {} })) as Obj
      assert.strictEqual(round.resultType, "input_required")
      assert.deepStrictEqual(Object.keys(round.inputRequests).sort(), ["first", "second"])
      assert.strictEqual(round.inputRequests.first?.params.message, "First?")
      assert.isString(round.requestState)
      const done = (yield* client.request("tools/call", {
        name: "pair",
        arguments: {},
        inputResponses: { first: accept("ada"), second: accept("bob") },
        requestState: round.requestState
      })) as Obj
      assert.strictEqual(textOf(done), "ada & bob")
    })
  )

  it.effect("each round's retry continues the upstream's round: the upstream's state comes back to it", () =>
    Effect.gen(function* () {
      const client = yield* stateless(yield* gateway)
      const call = { name: "steps", arguments: {} }
      const first = (yield* client.request("tools/call", call)) as Obj
      assert.deepStrictEqual(Object.keys(first.inputRequests), ["step1"])
      const second = yield* answer(client, call, { step1: accept("ada") }, first)
      assert.deepStrictEqual(Object.keys(second.inputRequests), ["step2"])
      // Only this round's answer: the first is in the upstream's state, which the gateway's carries.
      const done = yield* answer(client, call, { step2: accept("red") }, second)
      assert.strictEqual(textOf(done), "ada then red")
      // A state altered on the way is refused, as the upstream's own would be.
      const tampered = yield* Effect.flip(
        client.request("tools/call", {
          ...call,
          inputResponses: { step2: accept("red") },
          requestState: `${second.requestState}x`
        })
      )
      assert.strictEqual((tampered as Obj).code, -32602)
    })
  )

  it.effect("a read's round passes through too", () =>
    Effect.gen(function* () {
      const client = yield* stateless(yield* gateway)
      const read = { uri: "test://up/secret" }
      const round = (yield* client.request("resources/read", read)) as Obj
      assert.deepStrictEqual(Object.keys(round.inputRequests), ["password"])
      const done = (yield* client.request("resources/read", {
        ...read,
        inputResponses: { password: accept("ada") },
        requestState: round.requestState
      })) as { readonly contents: ReadonlyArray<{ readonly text?: string }> }
      assert.strictEqual(done.contents[0]?.text, "the secret, for ada")
    })
  )

  it.effect("answers sent without a state reach the upstream as sent", () =>
    Effect.gen(function* () {
      const client = yield* stateless(yield* gateway)
      const done = (yield* client.request("tools/call", {
        name: "pair",
        arguments: {},
        inputResponses: { first: accept("ada"), second: accept("bob"), extra: accept("x") }
      })) as Obj
      assert.strictEqual(textOf(done), "ada & bob")
    })
  )

  it.effect("a client that cannot be asked gets the upstream's -32021 naming the capability", () =>
    Effect.gen(function* () {
      const client = yield* stateless(yield* gateway, {})
      const error = (yield* Effect.flip(client.request("tools/call", { name: "pair", arguments: {} }))) as Obj
      assert.strictEqual(error.code, -32021)
      assert.isDefined(error.data.requiredCapabilities.elicitation)
    })
  )

  it.effect("progress the client asked for is relayed before the answer", () =>
    Effect.gen(function* () {
      const client = yield* McpTest.makeClient({ revision: "2026-07-28" }).pipe(Effect.provideContext(yield* gateway))
      const events = yield* Stream.runCollect(client.callToolWithProgress("progress", {}))
      assert.deepStrictEqual(
        events.map((e) => (e._tag === "Progress" ? e.update.progress : textOf(e.value))),
        [1, "done"]
      )
    })
  )

  it.effect("a 2025-11-25 client is asked on its session, one request per ask", () =>
    Effect.gen(function* () {
      const context = yield* gateway
      const asked: Array<string> = []
      const client = yield* McpTest.makeClient({
        revision: "2025-11-25",
        clientHandlers: ElicitationHandler.layer({
          form: (params) =>
            Effect.sync(() => {
              asked.push(params.message)
              return { action: "accept" as const, content: { name: params.message.slice(0, -1) } }
            })
        })
      }).pipe(Effect.provideContext(context))
      const result = yield* client.callTool("steps", {})
      assert.strictEqual(textOf(result), "Step 1 then Step 2")
      assert.deepStrictEqual(asked, ["Step 1?", "Step 2?"])
    })
  )

  it.effect("a stateless client of a 2025-11-25 upstream is asked in rounds of the gateway's own, one ask each", () =>
    Effect.gen(function* () {
      const client = yield* stateless(yield* gatewayOn({ client: { supportedVersions: ["2025-11-25"] } }))
      const call = { name: "steps", arguments: {} }
      const first = (yield* client.request("tools/call", call)) as Obj
      assert.deepStrictEqual(Object.keys(first.inputRequests), ["elicitation-0"])
      const second = yield* answer(client, call, { "elicitation-0": accept("ada") }, first)
      assert.deepStrictEqual(Object.keys(second.inputRequests), ["elicitation-1"])
      const done = yield* answer(client, call, { "elicitation-1": accept("red") }, second)
      assert.strictEqual(textOf(done), "ada then red")
    })
  )
})
