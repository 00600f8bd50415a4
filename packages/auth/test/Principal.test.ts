import { assert, describe, it } from "@effect/vitest"
import * as Principal from "@effect-mcp/auth/Principal"
import * as Effect from "effect/Effect"

const alice: Principal.PrincipalShape = {
  subject: "alice",
  clientId: "notes-app",
  issuer: "https://auth.example.com",
  scopes: ["notes:read", "profile"],
  audience: ["https://mcp.example.com/mcp"],
  expiresAt: undefined,
  claims: {}
}

describe("Principal", () => {
  it.effect("requireScopes gives the principal when every scope was granted", () =>
    Effect.gen(function* () {
      const caller = yield* Principal.requireScopes("notes:read").pipe(
        Effect.provideService(Principal.Principal, alice)
      )
      assert.strictEqual(caller.subject, "alice")
      assert.isTrue(Principal.hasScopes(alice, []))
    })
  )

  it.effect("requireScopes fails with every needed scope and the missing ones", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Principal.requireScopes("notes:read", "notes:write", "notes:write", "admin").pipe(
          Effect.provideService(Principal.Principal, alice)
        )
      )
      assert.deepStrictEqual(error.required, ["notes:read", "notes:write", "admin"])
      assert.deepStrictEqual(error.missing, ["notes:write", "admin"])
      assert.strictEqual(error.message, "insufficient scope: needs notes:write admin")
    })
  )
})
