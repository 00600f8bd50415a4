/**
 * The 2025-03-26 shape of authorization, served by the protected everything
 * server (a real process, `--auth`, tokens from oidc-provider on 127.0.0.1):
 * a client of that revision knows no RFC 9728 document and takes the MCP
 * server's origin for the authorization server. It finds the issuer's
 * metadata at the origin's `/.well-known/oauth-authorization-server`, or,
 * without metadata, uses `/authorize`, `/token` and `/register` there, which
 * answer 307 to the issuer's endpoints.
 *
 * The client is the official SDK 1.x, made a 2025-03-26 client by a fetch
 * that finds no protected resource metadata (its fallback is that revision's
 * behaviour); it sends no `resource` (RFC 8707 came with 2025-06-18), so the
 * provider's default audience is the server.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as Headless from "./headlessUserAgent.ts"
import * as Sdk from "./sdkOAuth.ts"

/** The provider and the protected server (its endpoint the provider's default audience). */
const setup = Effect.gen(function* () {
  let endpoint = ""
  const { provider, server } = yield* Sdk.start("notes:read,notes:write", false, {
    registration: true,
    defaultResource: () => endpoint
  })
  endpoint = server.url
  const issuerMetadata = yield* Effect.promise(() =>
    fetch(`${provider.issuer}/.well-known/openid-configuration`).then(
      (response) => response.json() as Promise<Record<string, string>>
    )
  )
  return { provider, server, issuerMetadata }
})

/**
 * A fetch of a 2025-03-26 client: no protected resource metadata (404), and,
 * with `noMetadata`, none for the authorization server at the MCP origin
 * either. Records what was asked and answered.
 */
const legacyFetch = (origin: string, noMetadata: boolean) =>
  Sdk.recordingFetch(
    (url) =>
      url.pathname.startsWith("/.well-known/oauth-protected-resource") ||
      (noMetadata && url.origin === origin && url.pathname.startsWith("/.well-known/"))
  )

const redirected = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { ...init, redirect: "manual" })
    await response.body?.cancel()
    const cors = response.headers.get("access-control-allow-origin")
    if (response.status === 307 && cors !== "*") throw new Error("a redirect without access-control-allow-origin: *")
    return { status: response.status, location: response.headers.get("location") }
  })

describe("the 2025-03-26 shape at the protected everything server", () => {
  it.live("the issuer's metadata at the origin, and the default endpoints redirecting to the issuer's", () =>
    Effect.gen(function* () {
      const { provider, server, issuerMetadata } = yield* setup
      const mirrored = yield* Effect.promise(() =>
        fetch(`${server.base}/.well-known/oauth-authorization-server`).then(
          (response) => response.json() as Promise<Record<string, string>>
        )
      )
      // The issuer's own document: its issuer and endpoints (the tokens and the redirects' `iss` name it).
      assert.strictEqual(mirrored.issuer, provider.issuer)
      assert.strictEqual(mirrored.token_endpoint, issuerMetadata.token_endpoint)
      assert.strictEqual(mirrored.authorization_endpoint, issuerMetadata.authorization_endpoint)

      const query = "response_type=code&client_id=c&code_challenge=x&code_challenge_method=S256&state=s%20t"
      const authorize = yield* redirected(`${server.base}/authorize?${query}`)
      assert.strictEqual(authorize.status, 307)
      const target = new URL(authorize.location!)
      assert.strictEqual(`${target.origin}${target.pathname}`, issuerMetadata.authorization_endpoint)
      assert.strictEqual(target.searchParams.get("state"), "s t")
      assert.strictEqual(target.searchParams.get("code_challenge_method"), "S256")
      const post = { method: "POST", body: "grant_type=authorization_code" }
      const token = yield* redirected(`${server.base}/token`, post)
      assert.deepStrictEqual(token, { status: 307, location: issuerMetadata.token_endpoint! })
      const register = yield* redirected(`${server.base}/register`, { method: "POST", body: "{}" })
      assert.deepStrictEqual(register, { status: 307, location: issuerMetadata.registration_endpoint! })
      // Only the methods those endpoints are used with; the MCP endpoint still needs a token.
      assert.strictEqual((yield* redirected(`${server.base}/token`)).status, 404)
      assert.strictEqual((yield* redirected(server.url, post)).status, 401)
    })
  )

  it.live("an issuer without registration: /register is 404; an issuer that is down: 503", () =>
    Effect.gen(function* () {
      const provider = yield* OidcProvider.start
      const server = yield* ServerProcess.spawnHttp(["--auth", "--auth-issuer", provider.issuer])
      assert.strictEqual((yield* redirected(`${server.base}/register`, { method: "POST", body: "{}" })).status, 404)
      assert.strictEqual((yield* redirected(`${server.base}/token`, { method: "POST", body: "" })).status, 307)
      const down = yield* ServerProcess.spawnHttp(["--auth", "--auth-issuer", "http://127.0.0.1:9"])
      for (const path of ["/authorize", "/.well-known/oauth-authorization-server"]) {
        assert.strictEqual((yield* redirected(`${down.base}${path}`)).status, 503)
      }
    })
  )

  it.live("the SDK as a 2025-03-26 client: metadata at the MCP server's origin, login, tools", () =>
    Effect.gen(function* () {
      const { provider, server } = yield* setup
      const legacy = legacyFetch(server.base, false)
      const sdk = Sdk.provider({ refresh: true })
      const browser = Headless.make(Sdk.redirectUri)
      const errors: Sdk.Errors = []
      const { client } = yield* Sdk.connect(server.url, sdk, browser, errors, { fetch: legacy.fetch })
      assert.include(Sdk.textOf(yield* Effect.promise(() => client.callTool({ name: "test_simple_text" }))), "simple")
      assert.include(legacy.seen, `GET ${server.base}/.well-known/oauth-authorization-server 200`)
      // Registered and exchanged at the issuer's endpoints, which the mirrored document names.
      assert.include(legacy.seen, `POST ${provider.issuer}/reg 201`)
      assert.include(legacy.seen, `POST ${provider.issuer}/token 200`)
      assert.strictEqual(browser.visits(), 1)
      Sdk.assertNoSecret(sdk.secrets, [server.stderr(), ...errors])
    })
  )

  it.live("the SDK as a 2025-03-26 client without metadata: /register, /authorize and /token at the origin", () =>
    Effect.gen(function* () {
      const { server } = yield* setup
      // Following a redirect to another origin is the SDK's redirectPolicy 'follow'; by default it refuses.
      const refused = yield* Effect.flip(
        Sdk.connect(server.url, Sdk.provider({ refresh: true }), Headless.make(Sdk.redirectUri), [], {
          fetch: legacyFetch(server.base, true).fetch
        })
      )
      assert.include(refused.message, "not followed")

      const legacy = legacyFetch(server.base, true)
      const sdk = Sdk.provider({ refresh: true })
      const browser = Headless.make(Sdk.redirectUri)
      const errors: Sdk.Errors = []
      const { client } = yield* Sdk.connect(server.url, sdk, browser, errors, {
        fetch: legacy.fetch,
        redirectPolicy: "follow"
      })
      assert.include(Sdk.textOf(yield* Effect.promise(() => client.callTool({ name: "test_simple_text" }))), "simple")
      // The default endpoints at the MCP server's origin, each a 307 the client followed to the issuer.
      assert.include(legacy.seen, `POST ${server.base}/register 201`)
      assert.include(legacy.seen, `POST ${server.base}/token 200`)
      assert.isTrue(
        legacy.seen.some((line) => line.startsWith(`GET ${server.base}/.well-known/oauth-authorization-server`))
      )
      assert.strictEqual(browser.visits(), 1)
      Sdk.assertNoSecret(sdk.secrets, [server.stderr(), ...errors])
    })
  )
})
