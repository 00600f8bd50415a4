/**
 * The everything server over stdio reads its request-state keys
 * (`--request-state-key`, else MCP_REQUEST_STATE_KEYS) as over HTTP: two
 * stdio processes given the same key open each other's 2026-07-28 rounds,
 * as a gateway's replicas do when each runs its own stdio upstream. Our
 * client talks to both through one transport that sends each `tools/call`
 * round to the other process in turn (everything else to the first); with
 * other keys the round on the second process is refused with -32602.
 */
import * as ElicitationHandler from "@effect-mcp/client/ElicitationHandler"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { everythingBin, node } from "../support/ServerProcess.ts"

const key = "stdio-key-0123456789abcdef0123456789abcd"
const otherKey = "other-key-fedcba9876543210fedcba98765432"

/** An everything server over stdio, a child of this test, with `flags` and `env`. */
const child = (flags: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  NodeStdio.makeClient({ command: node, args: [everythingBin, "--stdio", ...flags], env: { ...process.env, ...env } })

/** One transport over two processes: each `tools/call` to the next of them in turn, anything else to the first. */
const alternating = (first: Transport.TransportShape, second: Transport.TransportShape) => {
  const calls = [0, 0]
  let next = 0
  const transport: Transport.TransportShape = {
    incoming: Stream.merge(first.incoming, second.incoming),
    send: (frame, options) => {
      const message = Array.isArray(frame) ? undefined : (frame as JsonRpc.Message)
      const call = message !== undefined && JsonRpc.isRequest(message) && message.method === "tools/call"
      const index = call ? next++ % 2 : 0
      if (call) calls[index]!++
      return (index === 0 ? first : second).send(frame, options)
    }
  }
  return { transport, calls }
}

/** The two-round fixture tool called through both processes; the outcome and the rounds each served. */
const acrossTwo = (a: Transport.TransportShape, b: Transport.TransportShape) =>
  Effect.gen(function* () {
    const { transport, calls } = alternating(a, b)
    const context = yield* Layer.build(
      McpClient.layer({ clientInfo: { name: "rounds", version: "1.0.0" }, supportedVersions: ["2026-07-28"] }).pipe(
        Layer.provide(Layer.succeed(Transport.Transport, transport)),
        Layer.provide(
          ElicitationHandler.layer({
            form: (params) => {
              const field = Object.keys(params.requestedSchema.properties)[0]!
              return Effect.succeed({ action: "accept", content: { [field]: field === "name" ? "Ada" : "teal" } })
            }
          })
        )
      )
    )
    const client = Context.get(context, McpClient.McpClient)
    assert.strictEqual(client.revision, "2026-07-28")
    const outcome = yield* Effect.result(
      Effect.map(client.callTool("test_input_required_result_multi_round", {}), (result) =>
        result.content.map((block) => (block.type === "text" ? block.text : "")).join("")
      )
    )
    return { outcome, calls }
  })

describe("the everything server over stdio: request-state keys", () => {
  it.live(
    "the same key (flag on one, variable on the other): the rounds land on both processes and the call succeeds",
    () =>
      Effect.gen(function* () {
        const a = yield* child(["--request-state-key", key])
        const b = yield* child([], { MCP_REQUEST_STATE_KEYS: key })
        const { outcome, calls } = yield* acrossTwo(a, b)
        assert.strictEqual(outcome._tag, "Success", String(outcome._tag === "Failure" ? outcome.failure : ""))
        if (outcome._tag === "Success") assert.strictEqual(outcome.success, "Completed: name=Ada, color=teal")
        // Three rounds (ask step 1, ask step 2, the result): first, second, first process.
        assert.deepStrictEqual(calls, [2, 1])
        // The key given is never written out.
        for (const process of [a, b]) assert.notInclude(yield* process.stderrTail, key)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "other keys: the round on the second process is refused with -32602",
    () =>
      Effect.gen(function* () {
        const a = yield* child(["--request-state-key", key])
        const b = yield* child(["--request-state-key", otherKey])
        const { outcome } = yield* acrossTwo(a, b)
        // InvalidParams, -32602: a requestState this process cannot open.
        assert.strictEqual(outcome._tag, "Failure")
        if (outcome._tag === "Failure")
          assert.strictEqual((outcome.failure as { readonly _tag: string })._tag, "InvalidParams")
      }).pipe(Effect.scoped),
    60_000
  )
})
