import { assert, describe, it } from "@effect/vitest"
import * as Bearer from "@effect-mcp/auth/Bearer"
import * as Effect from "effect/Effect"

describe("Bearer", () => {
  it("reads exactly one bearer token, the scheme in any case", () => {
    assert.deepStrictEqual(Bearer.parse("Bearer abc.DEF-_~+/=="), { _tag: "Token", token: "abc.DEF-_~+/==" })
    assert.deepStrictEqual(Bearer.parse("bEaReR  tok"), { _tag: "Token", token: "tok" })
    assert.deepStrictEqual(Bearer.parse(["Bearer tok"]), { _tag: "Token", token: "tok" })
    assert.deepStrictEqual(Bearer.parse(undefined), { _tag: "None" })
    assert.deepStrictEqual(Bearer.parse([]), { _tag: "None" })
  })

  it("refuses another scheme, two tokens, bad characters and repeated headers", () => {
    for (const header of [
      "Basic dXNlcjpwYXNz",
      "Bearer a b",
      "Bearer",
      "Bearer ",
      'Bearer to"k',
      "Bearertok",
      "Bearer a=b"
    ]) {
      assert.deepStrictEqual(Bearer.parse(header), { _tag: "Malformed", reason: "MalformedHeader" }, header)
    }
    assert.deepStrictEqual(Bearer.parse(["Bearer a", "Bearer b"]), { _tag: "Malformed", reason: "RepeatedHeader" })
  })

  it("tells whether a URL carries access_token in its query", () => {
    assert.isTrue(Bearer.carriesAccessToken("/mcp?access_token=x"))
    assert.isTrue(Bearer.carriesAccessToken("/mcp?a=1&access_token="))
    assert.isTrue(Bearer.carriesAccessToken(new URL("https://h/mcp?access_token=x")))
    assert.isFalse(Bearer.carriesAccessToken("/mcp"))
    assert.isFalse(Bearer.carriesAccessToken("/mcp?token=x"))
    assert.isFalse(Bearer.carriesAccessToken("/mcp#access_token=x"))
  })

  it.effect("fromRequest: missing, malformed, in the query (even beside a good header), or the token", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.flip(Bearer.fromRequest({ url: "/mcp", authorization: undefined }))
      assert.strictEqual(missing._tag, "MissingToken")
      const malformed = yield* Effect.flip(Bearer.fromRequest({ url: "/mcp", authorization: "Basic x" }))
      assert.deepStrictEqual(
        [malformed._tag, malformed._tag === "InvalidRequest" && malformed.reason],
        ["InvalidRequest", "MalformedHeader"]
      )
      const query = yield* Effect.flip(Bearer.fromRequest({ url: "/mcp?access_token=t", authorization: "Bearer t" }))
      assert.deepStrictEqual(
        [query._tag, query._tag === "InvalidRequest" && query.reason],
        ["InvalidRequest", "TokenInQuery"]
      )
      assert.notInclude(query.message, "t&")
      const token = yield* Bearer.fromRequest({ url: "/mcp?x=1", authorization: "Bearer tok" })
      assert.strictEqual(token, "tok")
    })
  )
})
