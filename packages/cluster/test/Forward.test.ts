/**
 * What the receiving process reads of an exchange to answer for a lost owner:
 * the ids of a POST's requests, which of them an SSE reply answered (lines
 * split across chunks), and the error answers it writes for the rest.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Forward from "../src/internal/forward.ts"

describe("forwarded exchanges", () => {
  it("reads the ids of the requests of a POST body (notifications and responses have none)", () => {
    assert.deepStrictEqual(Forward.requestIdsOf(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call" })), [7])
    assert.deepStrictEqual(
      Forward.requestIdsOf(
        JSON.stringify([
          { jsonrpc: "2.0", id: "a", method: "ping" },
          { jsonrpc: "2.0", method: "notifications/initialized" },
          { jsonrpc: "2.0", id: 3, result: {} }
        ])
      ),
      ["a"]
    )
    assert.deepStrictEqual(Forward.requestIdsOf("not json"), [])
  })

  it("follows an SSE reply across chunk boundaries: only responses answer a request", () => {
    const answered = new Forward.AnsweredIds([1, 2])
    answered.see(
      'id: e1\nretry: 1000\ndata: \n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
    )
    answered.see('"params":{}}\n\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"res')
    assert.deepStrictEqual([...answered.pending], [1, 2])
    answered.see('ult":{}}\n\n')
    assert.deepStrictEqual([...answered.pending], [2])
  })

  it("answers each request still pending with an InternalError event", () => {
    const text = Forward.lostEvents([2, "x"])
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)))
    assert.deepStrictEqual(
      events.map((event) => [event.id, event.error.code]),
      [
        [2, -32603],
        ["x", -32603]
      ]
    )
    assert.match(events[0].error.message, /lost/)
  })
})
