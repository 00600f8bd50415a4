/**
 * Redirect URIs are loopback or HTTPS (2025-03-26 on: they MUST be localhost
 * URLs or HTTPS URLs): `UserAgent.make` throws the typed `InvalidRedirectUri`,
 * `UserAgent.layer` fails with it, and the OAuth client refuses a user agent
 * made by hand with another URI before it sends anything.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const never = () => Effect.never

const accepted = [
  "http://127.0.0.1:8765/callback",
  "http://127.1.2.3/cb",
  "http://localhost:3000/callback",
  "http://[::1]:9/cb",
  "https://app.example.com/oauth/callback"
]

const refused: ReadonlyArray<readonly [string, UserAgent.InvalidRedirectUri["reason"]]> = [
  ["http://app.example.com/callback", "NotLoopbackOrHttps"],
  ["http://127.0.0.1.example.com/cb", "NotLoopbackOrHttps"],
  ["com.example.app:/callback", "NotLoopbackOrHttps"],
  ["ftp://127.0.0.1/cb", "NotLoopbackOrHttps"],
  ["https://app.example.com/cb#frag", "Fragment"],
  ["/callback", "NotAUrl"]
]

describe("redirect URIs are loopback or HTTPS", () => {
  it("UserAgent.make accepts loopback http and https, and throws InvalidRedirectUri for the rest", () => {
    for (const uri of accepted) assert.strictEqual(UserAgent.make(uri, never).redirectUri, uri)
    for (const [uri, reason] of refused) {
      let thrown: unknown
      try {
        UserAgent.make(uri, never)
      } catch (error) {
        thrown = error
      }
      assert.instanceOf(thrown, UserAgent.InvalidRedirectUri, uri)
      assert.strictEqual((thrown as UserAgent.InvalidRedirectUri).reason, reason, uri)
      assert.include((thrown as UserAgent.InvalidRedirectUri).message, JSON.stringify(uri))
    }
  })

  it.effect("UserAgent.layer fails with InvalidRedirectUri", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Layer.build(UserAgent.layer("http://app.example.com/cb", never)))
      assert.strictEqual(error._tag, "InvalidRedirectUri")
      assert.strictEqual(error.reason, "NotLoopbackOrHttps")
    })
  )

  it.effect("the OAuth client refuses a hand-made user agent with a plain http redirect before any request", () =>
    Effect.gen(function* () {
      let registered = 0
      const registration = Layer.succeed(ClientRegistration.ClientRegistration, {
        register: () => Effect.sync(() => registered++).pipe(Effect.andThen(Effect.never))
      } as unknown as ClientRegistration.ClientRegistration["Service"])
      const handMade = Layer.succeed(
        UserAgent.UserAgent,
        UserAgent.UserAgent.of({
          redirectUri: "http://app.example.com/callback",
          authorize: never
        })
      )
      const client = yield* OAuthClient.make({ allowInsecureRequests: true }).pipe(
        Effect.provide(Layer.mergeAll(registration, handMade, TokenStore.layerMemory))
      )
      // No server listens on port 9: a request would fail differently (and discovery comes before registration).
      const error = yield* Effect.flip(client.authorize("http://127.0.0.1:9/mcp", undefined))
      assert.strictEqual(error._tag, "AuthorizationFailed")
      assert.include(error.message, "redirect uri")
      assert.include(error.message, "http://app.example.com/callback")
      assert.strictEqual(registered, 0)
    })
  )
})
