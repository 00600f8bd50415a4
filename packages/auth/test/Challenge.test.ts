import { assert, describe, it } from "@effect/vitest"
import * as AuthError from "@effect-mcp/auth/AuthError"
import * as Challenge from "@effect-mcp/auth/Challenge"
import * as Option from "effect/Option"

const metadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

describe("Challenge", () => {
  it("formats the parameters as RFC 6750 quoted strings", () => {
    assert.strictEqual(
      Challenge.format({
        resourceMetadata: metadata,
        scope: ["notes:read", "notes:write"],
        error: "invalid_token",
        errorDescription: 'the token "x" \\ expired\n'
      }),
      `Bearer resource_metadata="${metadata}", scope="notes:read notes:write", error="invalid_token", error_description="the token x  expired"`
    )
    assert.strictEqual(Challenge.format({}), "Bearer")
    assert.strictEqual(Challenge.format({ realm: 'a"b\\c' }), 'Bearer realm="a\\"b\\\\c"')
    // A scope token with a forbidden character (space, quote) is left out rather than breaking the header.
    assert.strictEqual(Challenge.format({ scope: ["ok", 'b"ad', "a b"] }), 'Bearer scope="ok"')
  })

  it("parses back what it formats", () => {
    const challenge: Challenge.Bearer = {
      resourceMetadata: metadata,
      scope: ["a", "b"],
      error: "insufficient_scope",
      errorDescription: "needs a b",
      realm: 'r"1'
    }
    assert.deepStrictEqual(Challenge.parse(Challenge.format(challenge)), Option.some(challenge))
  })

  it("parses several challenges, token68, unquoted values and odd spacing", () => {
    const parsed = Challenge.parseAll(
      'Basic realm="x", Negotiate YWJj=, Bearer  error = invalid_token ,scope="a b",resource_metadata="https://h/m?x=1,2", DPoP algs="ES256"'
    )
    assert.deepStrictEqual(
      parsed.map((c) => [c.scheme, { ...c.params }, c.token68]),
      [
        ["Basic", { realm: "x" }, undefined],
        ["Negotiate", {}, "YWJj="],
        ["Bearer", { error: "invalid_token", scope: "a b", resource_metadata: "https://h/m?x=1,2" }, undefined],
        ["DPoP", { algs: "ES256" }, undefined]
      ]
    )
    const bearer = Challenge.parse(['Basic realm="x"', 'bearer resource_metadata="https://h/r", error="other"'])
    assert.deepStrictEqual(
      Option.map(bearer, (b) => [b.resourceMetadata, b.error]),
      Option.some(["https://h/r", undefined])
    )
    assert.isTrue(Option.isNone(Challenge.parse('Basic realm="x"')))
    // A DPoP-only server's challenge is read the same way (a step-up, its metadata); Bearer wins when both come.
    const dpop = Challenge.parse(
      'DPoP algs="ES256", error="insufficient_scope", scope="a b", resource_metadata="https://h/d"'
    )
    assert.deepStrictEqual(
      Option.map(dpop, (d) => [d.error, d.scope, d.resourceMetadata]),
      Option.some(["insufficient_scope", ["a", "b"], "https://h/d"])
    )
    const both = Challenge.parse(['DPoP error="insufficient_scope"', 'Bearer resource_metadata="https://h/b"'])
    assert.deepStrictEqual(
      Option.map(both, (b) => [b.error, b.resourceMetadata]),
      Option.some([undefined, "https://h/b"])
    )
    // Parameter names are case-insensitive; a `__proto__` parameter is only a parameter.
    const odd = Challenge.parseAll('Bearer Scope="s", __proto__="p"')[0]!
    assert.strictEqual(odd.params.scope, "s")
    assert.strictEqual(Object.getOwnPropertyDescriptor(odd.params, "__proto__")?.value, "p")
    // An unterminated quoted string ends the parse with what came before it.
    assert.deepStrictEqual(Challenge.parseAll('Bearer error="invalid_token", scope="a').length, 1)
  })

  it("answers each authorization failure with its status and challenge", () => {
    const options = { resourceMetadata: metadata, scope: ["notes:read"] }
    assert.deepStrictEqual(Challenge.answer(new AuthError.MissingToken(), options), {
      status: 401,
      challenge: `Bearer resource_metadata="${metadata}", scope="notes:read"`
    })
    const invalid = Challenge.answer(new AuthError.InvalidToken({ reason: "WrongAudience" }), options)
    assert.strictEqual(invalid.status, 401)
    assert.include(invalid.challenge, 'error="invalid_token"')
    const scope = Challenge.answer(
      new AuthError.InsufficientScope({ required: ["notes:read", "notes:write"], missing: ["notes:write"] }),
      options
    )
    assert.strictEqual(scope.status, 403)
    assert.include(scope.challenge, 'scope="notes:read notes:write", error="insufficient_scope"')
    assert.strictEqual(Challenge.answer(new AuthError.InvalidRequest({ reason: "TokenInQuery" }), options).status, 400)
    assert.deepStrictEqual(
      Challenge.answer(new AuthError.VerifierUnavailable({ step: "key set", detail: "down" }), options),
      { status: 503, challenge: undefined }
    )
  })
})
