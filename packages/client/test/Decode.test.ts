import { assert, describe, it } from "@effect/vitest"
import * as Tools from "@effect-mcp/protocol/Tools"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Decode from "../src/internal/decode.ts"

const bySchema = Schema.decodeUnknownResult(Tools.CallToolResult)

describe("tool result decoding", () => {
  it("text-only results skip the schema and decode to the value the schema gives, as a copy", () => {
    const inputs: ReadonlyArray<object> = [
      { content: [] },
      { content: [{ type: "text", text: "hello" }] },
      {
        content: [
          { text: "a", type: "text" },
          { type: "text", text: "" }
        ]
      },
      { content: [{ type: "text", text: "failed" }], isError: true },
      { isError: false, content: [{ type: "text", text: "ok" }] }
    ]
    for (const input of inputs) {
      const fast = Decode.plainTextResult(input)
      const expected = bySchema(input)
      assert.isDefined(fast, JSON.stringify(input))
      assert.isTrue(Result.isSuccess(expected))
      if (Result.isSuccess(expected)) assert.deepStrictEqual(fast, expected.success)
      assert.notStrictEqual(fast, input)
      assert.notStrictEqual(fast?.content, (input as { content: unknown }).content)
    }
  })

  it("anything else is left to the schema: other blocks, extra keys, wrong types", () => {
    class Result_ {
      readonly content = [{ type: "text", text: "x" }]
    }
    const inputs: ReadonlyArray<unknown> = [
      null,
      "text",
      [],
      new Result_(),
      {},
      { content: "hello" },
      { content: [{ type: "text", text: 1 }] },
      { content: [{ type: "text" }] },
      { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
      { content: [{ type: "text", text: "x", annotations: { priority: 1 } }] },
      { content: [{ type: "text", text: "x", _meta: {} }] },
      { content: [{ type: "text", text: "x" }], structuredContent: { n: 1 } },
      { content: [{ type: "text", text: "x" }], _meta: {} },
      { content: [{ type: "text", text: "x" }], resultType: "complete" },
      { content: [{ type: "text", text: "x" }], isError: "yes" },
      { content: [{ type: "text", text: "x" }], isError: undefined },
      { content: [null] },
      { content: [new Result_()] }
    ]
    for (const input of inputs) assert.isUndefined(Decode.plainTextResult(input), JSON.stringify(input))
  })
})
