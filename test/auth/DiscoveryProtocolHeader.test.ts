/**
 * OAuth metadata discovery names the MCP revision (2025-03-26 on: clients
 * MUST send `MCP-Protocol-Version` during server metadata discovery), on
 * every request it makes: protected resource metadata and authorization
 * server metadata alike, and for a 2025-03-26 server without resource
 * metadata. A real listener on 127.0.0.1 records each request's headers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Discovery from "@effect-mcp/auth/Discovery"
import * as Effect from "effect/Effect"
import type { AddressInfo } from "node:net"
import { listen } from "../support/Listen.ts"

interface Seen {
  readonly path: string
  readonly version: string | undefined
}

/** A server that is its own authorization server; `withResourceMetadata` false makes it a 2025-03-26 one. */
const server = (withResourceMetadata: boolean) =>
  Effect.gen(function* () {
    const seen: Array<Seen> = []
    let base = ""
    const node = yield* listen((request, response) => {
      const path = new URL(request.url ?? "/", base).pathname
      const version = request.headers["mcp-protocol-version"]
      seen.push({ path, version: Array.isArray(version) ? version.join(",") : version })
      const json = (body: object) =>
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
      if (withResourceMetadata && path.startsWith("/.well-known/oauth-protected-resource")) {
        return json({ resource: `${base}/mcp`, authorization_servers: [base] })
      }
      if (path === "/.well-known/oauth-authorization-server") {
        return json({
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          code_challenge_methods_supported: ["S256"]
        })
      }
      response.writeHead(404).end()
    })
    base = `http://127.0.0.1:${(node.address() as AddressInfo).port}`
    return { seen, mcp: `${base}/mcp` }
  })

describe("OAuth discovery sends MCP-Protocol-Version", () => {
  it.live("on the resource metadata and authorization server metadata requests (default revision)", () =>
    Effect.gen(function* () {
      const { seen, mcp } = yield* server(true)
      const found = yield* Discovery.discover(mcp, undefined, { allowInsecureRequests: true })
      assert.strictEqual(found.resourceMetadata?.resource, mcp)
      assert.isTrue(seen.some((s) => s.path.startsWith("/.well-known/oauth-protected-resource")))
      assert.isTrue(seen.some((s) => s.path === "/.well-known/oauth-authorization-server"))
      assert.deepStrictEqual(
        seen.filter((s) => s.version !== Discovery.defaultProtocolVersion),
        [],
        "every discovery request names the revision"
      )
    }).pipe(Effect.scoped)
  )

  it.live("for a 2025-03-26 server (no resource metadata), with the revision the caller names", () =>
    Effect.gen(function* () {
      const { seen, mcp } = yield* server(false)
      const found = yield* Discovery.discover(mcp, undefined, {
        allowInsecureRequests: true,
        protocolVersion: "2025-03-26"
      })
      assert.isUndefined(found.resourceMetadata)
      assert.strictEqual(found.authorizationServer.token_endpoint, `${new URL(mcp).origin}/token`)
      // The well-known resource metadata URLs (404 here), then the origin's authorization server metadata.
      assert.isAtLeast(seen.length, 2)
      assert.deepStrictEqual(
        seen.filter((s) => s.version !== "2025-03-26"),
        []
      )
    }).pipe(Effect.scoped)
  )
})
