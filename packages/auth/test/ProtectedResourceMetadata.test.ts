import { assert, describe, it } from "@effect/vitest"
import * as ProtectedResourceMetadata from "@effect-mcp/auth/ProtectedResourceMetadata"
import * as Effect from "effect/Effect"

describe("ProtectedResourceMetadata", () => {
  it("builds the document with header-only bearer methods", () => {
    assert.deepStrictEqual(
      ProtectedResourceMetadata.make({
        resource: "https://mcp.example.com/mcp",
        authorizationServers: ["https://auth.example.com"],
        scopesSupported: ["notes:read"],
        resourceName: "Notes"
      }),
      {
        resource: "https://mcp.example.com/mcp",
        authorization_servers: ["https://auth.example.com"],
        scopes_supported: ["notes:read"],
        bearer_methods_supported: ["header"],
        resource_name: "Notes"
      }
    )
    assert.strictEqual(
      ProtectedResourceMetadata.make({ resource: "https://h/", authorizationServers: ["https://a"] }).resource,
      "https://h"
    )
  })

  it("refuses a resource that is not an absolute http(s) URL without fragment, or no authorization server", () => {
    for (const resource of ["/mcp", "ftp://h/mcp", "https://h/mcp#x"]) {
      assert.throws(() => ProtectedResourceMetadata.make({ resource, authorizationServers: ["https://a"] }))
    }
    assert.throws(() => ProtectedResourceMetadata.make({ resource: "https://h/mcp", authorizationServers: [] }))
  })

  it("derives the well-known URLs, path-suffixed first", () => {
    assert.strictEqual(
      ProtectedResourceMetadata.wellKnownPath("https://h/mcp/"),
      "/.well-known/oauth-protected-resource/mcp"
    )
    assert.deepStrictEqual(ProtectedResourceMetadata.wellKnownUrls("https://h:8443/a/mcp"), [
      "https://h:8443/.well-known/oauth-protected-resource/a/mcp",
      "https://h:8443/.well-known/oauth-protected-resource"
    ])
    assert.deepStrictEqual(ProtectedResourceMetadata.wellKnownUrls("https://h"), [
      "https://h/.well-known/oauth-protected-resource"
    ])
    assert.strictEqual(
      ProtectedResourceMetadata.wellKnownUrl("https://h/mcp?tenant=1"),
      "https://h/.well-known/oauth-protected-resource/mcp?tenant=1"
    )
  })

  it("a fetched document is accepted only for the resource it names", () => {
    const doc = ProtectedResourceMetadata.make({ resource: "https://h/", authorizationServers: ["https://a"] })
    assert.isTrue(ProtectedResourceMetadata.matchesResource(doc, "https://h"))
    assert.isTrue(ProtectedResourceMetadata.matchesResource(doc, new URL("https://h/")))
    assert.isFalse(ProtectedResourceMetadata.matchesResource(doc, "https://h/mcp"))
    assert.isFalse(ProtectedResourceMetadata.matchesResource(doc, "https://evil.example/"))
    assert.isFalse(ProtectedResourceMetadata.matchesResource({ resource: "not a url" }, "https://h"))
  })

  it.effect("decodes a fetched document and keeps unknown fields; refuses one without resource", () =>
    Effect.gen(function* () {
      const doc = yield* ProtectedResourceMetadata.decode({
        resource: "https://h/mcp",
        authorization_servers: ["https://a"],
        dpop_bound_access_tokens_required: true
      })
      assert.strictEqual(doc.resource, "https://h/mcp")
      assert.strictEqual(doc.dpop_bound_access_tokens_required, true)
      const error = yield* Effect.flip(ProtectedResourceMetadata.decode({ authorization_servers: ["https://a"] }))
      assert.strictEqual(error._tag, "SchemaError")
    })
  )
})
