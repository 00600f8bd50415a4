/**
 * 2025-03-26 authorization: "PKCE is REQUIRED for all clients". OAuthClient
 * refuses an authorization server whose metadata does not list S256 in
 * `code_challenge_methods_supported` (absent, or `plain` only) before any
 * authorization URL reaches the user agent; one that lists it gets an S256
 * challenge whose verifier comes with the code. The server is a 2025-03-26
 * one (no protected resource metadata; the authorization server's metadata at
 * its origin), scripted on node:http at 127.0.0.1, recording every request.
 */
import { createHash } from "node:crypto"
import type * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { listen } from "../support/Listen.ts"

const redirectUri = "http://127.0.0.1:9/callback"

/** The MCP server's origin, serving its authorization server's metadata with `methods` (omitted when undefined). */
const authorizationServer = (methods: ReadonlyArray<string> | undefined) =>
  Effect.gen(function* () {
    const seen: Array<{ readonly path: string; readonly form: URLSearchParams }> = []
    const handler: http.RequestListener = (request, response) => {
      let body = ""
      request.on("data", (chunk: Buffer) => (body += chunk))
      request.on("end", () => {
        const url = new URL(request.url ?? "/", origin)
        seen.push({ path: url.pathname, form: new URLSearchParams(body) })
        const json = (status: number, value: unknown) =>
          response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
        switch (url.pathname) {
          case "/.well-known/oauth-authorization-server":
            return json(200, {
              issuer: origin,
              authorization_endpoint: `${origin}/authorize`,
              token_endpoint: `${origin}/token`,
              registration_endpoint: `${origin}/register`,
              response_types_supported: ["code"],
              ...(methods === undefined ? {} : { code_challenge_methods_supported: methods })
            })
          case "/register":
            return json(201, { client_id: "registered-client" })
          case "/token":
            return json(200, { access_token: "the-access-token", token_type: "Bearer", expires_in: 3600 })
          default:
            return json(404, {})
        }
      })
    }
    const server = yield* listen(handler)
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { origin, seen }
  })

/** A user agent that approves at once, recording the authorization URLs it was given. */
const approving = (visited: Array<URL>) =>
  UserAgent.layer(redirectUri, (authorizationUrl) =>
    Effect.sync(() => {
      visited.push(authorizationUrl)
      const redirect = new URL(redirectUri)
      redirect.searchParams.set("code", "the-code")
      redirect.searchParams.set("state", authorizationUrl.searchParams.get("state") ?? "")
      redirect.searchParams.set("iss", authorizationUrl.origin)
      return redirect
    })
  )

/** Logs in to `<origin>/mcp` after its bare 401 challenge (a 2025-03-26 server names no metadata). */
const login = (origin: string, visited: Array<URL>) =>
  Effect.flatMap(OAuthClient.OAuthClient, (oauth) => oauth.authorize(`${origin}/mcp`, "Bearer")).pipe(
    Effect.provide(
      OAuthClient.layer({ allowInsecureRequests: true }).pipe(
        Layer.provide([
          TokenStore.layerMemory,
          ClientRegistration.layer({ allowInsecureRequests: true }),
          approving(visited)
        ])
      )
    )
  )

describe("2025-03-26: PKCE S256 is required of the authorization server", () => {
  for (const [label, methods] of [
    ["no code_challenge_methods_supported", undefined],
    ["plain only", ["plain"]]
  ] as const) {
    it.live(`an authorization server advertising ${label} is refused before the user agent is sent`, () =>
      Effect.gen(function* () {
        const { origin, seen } = yield* authorizationServer(methods)
        const visited: Array<URL> = []
        const error = yield* Effect.flip(
          Effect.flatMap(login(origin, visited), (token) => Effect.die(`logged in, with ${token}`))
        )
        assert.strictEqual(error._tag, "AuthorizationFailed")
        assert.include(error.message, "does not advertise PKCE S256")
        assert.deepStrictEqual(visited, [])
        assert.isFalse(
          seen.some((r) => r.path === "/token"),
          JSON.stringify(seen.map((r) => r.path))
        )
      }).pipe(Effect.scoped)
    )
  }

  it.live("one advertising S256 (among others) gets an S256 challenge, and the code comes with its verifier", () =>
    Effect.gen(function* () {
      const { origin, seen } = yield* authorizationServer(["plain", "S256"])
      const visited: Array<URL> = []
      assert.strictEqual(yield* login(origin, visited), "the-access-token")
      assert.strictEqual(visited.length, 1)
      const authorization = visited[0]!.searchParams
      assert.strictEqual(authorization.get("code_challenge_method"), "S256")
      const token = seen.find((r) => r.path === "/token")!.form
      assert.strictEqual(token.get("grant_type"), "authorization_code")
      const verifier = token.get("code_verifier") ?? ""
      assert.isAtLeast(verifier.length, 43)
      assert.strictEqual(authorization.get("code_challenge"), createHash("sha256").update(verifier).digest("base64url"))
    }).pipe(Effect.scoped)
  )
})
