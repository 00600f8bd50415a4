import { assert, describe, it } from "@effect/vitest"
import { InvalidToken } from "@effect-mcp/auth/AuthError"
import type { PrincipalShape } from "@effect-mcp/auth/Principal"
import * as ProtectedResource from "@effect-mcp/auth/ProtectedResource"
import * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import * as Effect from "effect/Effect"

const principal = (scopes: ReadonlyArray<string>): PrincipalShape => ({
  subject: "alice",
  clientId: "app",
  issuer: "https://auth.example.com",
  scopes,
  audience: ["https://mcp.example.com/mcp"],
  expiresAt: undefined,
  claims: {}
})

// Tokens "read" and "none" verify with those scopes; any other is invalid.
const Verifier = TokenVerifier.layer((token) =>
  token === "read"
    ? Effect.succeed(principal(["notes:read"]))
    : token === "none"
      ? Effect.succeed(principal([]))
      : Effect.fail(new InvalidToken({ reason: "BadSignature" }))
)

const resource = ProtectedResource.make({
  resource: "https://mcp.example.com/mcp",
  authorizationServers: ["https://auth.example.com"],
  scopesSupported: ["notes:read", "notes:write"],
  requiredScopes: ["notes:read"]
})

const statusOf = (url: string, authorization: string | undefined) =>
  resource.authenticate({ url, authorization }).pipe(
    Effect.map((p) => [200, p.subject] as const),
    Effect.catch((error) => Effect.succeed([resource.answer(error).status, resource.answer(error).challenge] as const)),
    Effect.provide(Verifier)
  )

describe("ProtectedResource", () => {
  it("publishes its metadata on the path-suffixed and root well-known paths", () => {
    assert.strictEqual(resource.metadata.resource, "https://mcp.example.com/mcp")
    assert.strictEqual(resource.metadataUrl, "https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
    assert.deepStrictEqual(resource.metadataPaths, [
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource"
    ])
  })

  it.effect("answers each request: 200, 401 with the metadata challenge, 400, 401 invalid_token, 403", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* statusOf("/mcp", "Bearer read"), [200, "alice"])
      assert.deepStrictEqual(yield* statusOf("/mcp", undefined), [
        401,
        `Bearer resource_metadata="${resource.metadataUrl}", scope="notes:read"`
      ])
      assert.strictEqual((yield* statusOf("/mcp?access_token=read", "Bearer read"))[0], 400)
      const invalid = yield* statusOf("/mcp", "Bearer forged")
      assert.strictEqual(invalid[0], 401)
      assert.include(invalid[1], 'error="invalid_token"')
      const forbidden = yield* statusOf("/mcp", "Bearer none")
      assert.strictEqual(forbidden[0], 403)
      assert.include(forbidden[1], 'scope="notes:read", error="insufficient_scope"')
    })
  )
})
