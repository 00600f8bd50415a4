/**
 * `mcp-everything-server --http --auth` as a real process: protected by a
 * real OpenID provider (oidc-provider on 127.0.0.1), it challenges anonymous
 * requests with its metadata's URL, refuses a malformed token with
 * `invalid_token`, names the issuer in its metadata, serves a token for its
 * endpoint, and checks `--auth-tool-scope`. Started against an issuer that
 * does not answer, it still starts, and a request costs a 503.
 */
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import { listen } from "../support/Listen.ts"
import { initialize, post } from "./rawMcp.ts"

// A well-formed JWS (the verifier looks for its key), signed by no one.
const unsignedJwt = [{ alg: "RS256", kid: "k" }, { sub: "x" }]
  .map((part) => Buffer.from(JSON.stringify(part)).toString("base64url"))
  .concat("c2lnbmF0dXJl")
  .join(".")

describe("mcp-everything-server --auth", () => {
  it.live("challenges, refuses and serves as a protected resource of the issuer", () =>
    Effect.gen(function* () {
      const provider = yield* OidcProvider.startWith({
        acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:")
      })
      const server = yield* ServerProcess.spawnHttp([
        "--auth",
        "--auth-issuer",
        provider.issuer,
        "--auth-scopes",
        provider.scopes.join(","),
        "--auth-tool-scope",
        "test_simple_text=notes:write"
      ])
      const metadataUrl = `${server.base}/.well-known/oauth-protected-resource/mcp`
      const anonymous = yield* post(server.url, initialize, undefined)
      assert.strictEqual(anonymous.status, 401)
      assert.strictEqual(
        anonymous.challenge,
        `Bearer resource_metadata="${metadataUrl}", scope="notes:read notes:write"`
      )
      const malformed = yield* post(server.url, initialize, "garbage")
      assert.strictEqual(malformed.status, 401)
      assert.include(malformed.challenge, 'error="invalid_token"')
      const metadata = yield* Effect.promise(() =>
        fetch(metadataUrl).then((r) => r.json() as Promise<Record<string, unknown>>)
      )
      assert.deepStrictEqual(metadata.authorization_servers, [provider.issuer])
      assert.strictEqual(metadata.resource, server.url)
      // A token for this endpoint (the default audience) is served; test_simple_text needs notes:write.
      const token = yield* provider.token(server.url, "notes:read")
      const init = yield* post(server.url, initialize, token)
      assert.strictEqual(init.status, 200, init.text)
      const headers = { "mcp-session-id": init.session!, "mcp-protocol-version": "2025-11-25" }
      yield* post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, token, headers)
      const echo = {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "test_simple_text", arguments: {} }
      }
      const refused = yield* post(server.url, echo, token, headers)
      assert.strictEqual(refused.status, 403)
      assert.include(refused.challenge, 'error="insufficient_scope"')
      assert.include(refused.challenge, "notes:write")
      const stepped = yield* post(
        server.url,
        echo,
        yield* provider.token(server.url, "notes:read notes:write"),
        headers
      )
      assert.strictEqual(stepped.status, 200)
      assert.include(stepped.text, "This is a simple text response")
      assert.notInclude(server.stderr(), token)
    })
  )

  it.live("starts without reaching its issuer; a request then costs a 503", () =>
    Effect.gen(function* () {
      // A port nothing listens on (taken, then released): the issuer is down.
      const silent = yield* listen(() => {})
      const port = (silent.address() as AddressInfo).port
      yield* Effect.promise(() => new Promise<void>((resolve) => silent.close(() => resolve())))
      const server = yield* ServerProcess.spawnHttp(["--auth", "--auth-issuer", `http://127.0.0.1:${port}`])
      const anonymous = yield* post(server.url, initialize, undefined)
      assert.strictEqual(anonymous.status, 401)
      const unavailable = yield* post(server.url, initialize, unsignedJwt)
      assert.strictEqual(unavailable.status, 503)
      assert.isNull(unavailable.challenge)
    })
  )
})
