/**
 * What a relay answers itself for a lost server (`LostAnswers`): the ids of a
 * POST's requests, which of them an SSE reply answered (lines split across
 * chunks), and the error answers it writes for the rest.
 */
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import { assert, describe, it } from "@effect/vitest"
import * as LostAnswers from "../src/LostAnswers.ts"
import * as SseEvent from "../src/SseEvent.ts"

describe("answers for a lost server", () => {
  it("reads the ids of the requests of a POST body (notifications and responses have none)", () => {
    assert.deepStrictEqual(LostAnswers.requestsOf(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call" })), {
      ids: [7],
      batch: false
    })
    assert.deepStrictEqual(
      LostAnswers.requestsOf(
        JSON.stringify([
          { jsonrpc: "2.0", id: "a", method: "ping" },
          { jsonrpc: "2.0", method: "notifications/initialized" },
          { jsonrpc: "2.0", id: 3, result: {} },
          { id: 4, method: "not JSON-RPC" }
        ])
      ),
      { ids: ["a"], batch: true }
    )
    assert.deepStrictEqual(LostAnswers.requestsOf("not json"), { ids: [], batch: false })
  })

  it("answers a lost POST with JSON: one error per request, a batch for a batch", () => {
    assert.isUndefined(LostAnswers.lostJson({ ids: [], batch: true }))
    const single = JSON.parse(LostAnswers.lostJson({ ids: [7], batch: false })!)
    assert.deepStrictEqual([single.id, single.error.code], [7, -32603])
    const batch = JSON.parse(LostAnswers.lostJson({ ids: [1, "b"], batch: true })!)
    assert.deepStrictEqual(
      batch.map((answer: { id: unknown }) => answer.id),
      [1, "b"]
    )
  })

  it("follows an SSE reply across chunk boundaries: only responses answer a request", () => {
    const answered = new LostAnswers.AnsweredIds([1, 2])
    answered.see(
      'id: e1\nretry: 1000\ndata: \n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
    )
    answered.see('"params":{}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"res')
    assert.deepStrictEqual([...answered.pending], [1, 2])
    answered.see('ult":{}}\n\n')
    assert.deepStrictEqual([...answered.pending], [2])
    assert.strictEqual(answered.end(), "")
  })

  it("ends the event a cut reply stopped in before answering: a complete data line answers its request", () => {
    const line = new LostAnswers.AnsweredIds([1, 2])
    line.see('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n')
    assert.strictEqual(line.end(), "\n")
    assert.deepStrictEqual([...line.pending], [2])
    const cut = new LostAnswers.AnsweredIds([1])
    cut.see('event: message\ndata: {"jsonrpc":"2.0","id":1,"res')
    assert.strictEqual(cut.end(), "\n\n")
    assert.deepStrictEqual([...cut.pending], [1])
  })

  it("answers each request still pending with an InternalError event", () => {
    const events = SseEvent.parse(LostAnswers.lostEvents([2, "x"]))
    assert.deepStrictEqual(
      events.map((event) => event.event),
      ["message", "message"]
    )
    const answers = events.map((event) => {
      const decoded = JsonRpcCodec.decode(event.data)
      assert.isTrue(decoded._tag === "Success")
      return (decoded as { readonly success: { id: unknown; error: { code: number; message: string } } }).success
    })
    assert.deepStrictEqual(
      answers.map((answer) => [answer.id, answer.error.code]),
      [
        [2, -32603],
        ["x", -32603]
      ]
    )
    assert.match(answers[0]!.error.message, /lost/)
  })
})
