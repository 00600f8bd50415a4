/**
 * The raw readers of request ids the codec, the Peer and the HTTP transports
 * share: `JsonRpc.isRequestId` agrees with the `RequestId` Schema, and
 * `Cancellation.cancelledRequestId` reads a cancel's id with it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cancellation from "@effect-mcp/protocol/Cancellation"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const candidates: ReadonlyArray<unknown> = [
  "a",
  "",
  0,
  -7,
  42,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  null,
  undefined,
  true,
  {},
  [1],
  10n
]

describe("request ids read raw", () => {
  it.effect("isRequestId accepts exactly what the RequestId Schema accepts: strings and safe integers", () =>
    Effect.sync(() => {
      const isSchemaId = Schema.is(JsonRpc.RequestId)
      for (const candidate of candidates) {
        assert.strictEqual(JsonRpc.isRequestId(candidate), isSchemaId(candidate), String(candidate))
      }
    })
  )

  it.effect("cancelledRequestId reads the requestId of a cancel's params, undefined when absent or invalid", () =>
    Effect.sync(() => {
      assert.strictEqual(Cancellation.cancelledRequestId({ requestId: 7, reason: "user" }), 7)
      assert.strictEqual(Cancellation.cancelledRequestId({ requestId: "r-1" }), "r-1")
      // 2025-11-25 lets the id be absent (a task is cancelled with `tasks/cancel`).
      assert.isUndefined(Cancellation.cancelledRequestId({}))
      assert.isUndefined(Cancellation.cancelledRequestId({ requestId: 1.5 }))
      assert.isUndefined(Cancellation.cancelledRequestId({ requestId: null }))
      assert.isUndefined(Cancellation.cancelledRequestId(undefined))
      assert.isUndefined(Cancellation.cancelledRequestId(null))
      assert.isUndefined(Cancellation.cancelledRequestId("7"))
    })
  )
})
