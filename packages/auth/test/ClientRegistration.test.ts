import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as Discovery from "@effect-mcp/auth/Discovery"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

const requirements = { redirectUris: ["http://127.0.0.1:8/cb"], grantTypes: ["authorization_code"] }
const cimdUrl = "https://client.example/metadata.json"

describe("ClientRegistration", () => {
  it.effect("pre-registered credentials win, for every issuer or per issuer", () =>
    Effect.gen(function* () {
      const everywhere = ClientRegistration.make({ preRegistered: { clientId: "fixed" }, clientMetadataUrl: cimdUrl })
      const server = { issuer: "https://as.example", client_id_metadata_document_supported: true }
      assert.strictEqual((yield* everywhere.register(server, requirements)).clientId, "fixed")
      const perIssuer = ClientRegistration.make({
        preRegistered: (issuer) => (issuer === "https://as.example" ? { clientId: "known" } : undefined),
        clientMetadataUrl: cimdUrl
      })
      assert.strictEqual((yield* perIssuer.register(server, requirements)).clientId, "known")
      const other = yield* perIssuer.register({ ...server, issuer: "https://other.example" }, requirements)
      assert.strictEqual(other.clientId, cimdUrl)
    })
  )

  it.effect("a client ID metadata document URL is the client id only where the server advertises support", () =>
    Effect.gen(function* () {
      const registration = ClientRegistration.make({ clientMetadataUrl: cimdUrl, dynamic: false })
      const supported = yield* registration.register(
        { issuer: "https://as.example", client_id_metadata_document_supported: true },
        requirements
      )
      assert.deepStrictEqual(supported, { clientId: cimdUrl, authMethod: "none" })
      const error = yield* Effect.flip(registration.register({ issuer: "https://as.example" }, requirements))
      assert.strictEqual(error._tag, "RegistrationFailed")
      assert.include(error.message, "https://as.example")
    })
  )

  it("a client ID metadata document URL must be https: with a path (MCP 2025-11-25), else make throws", () => {
    const refused: ReadonlyArray<readonly [string, ClientRegistration.InvalidClientMetadataUrl["reason"]]> = [
      ["http://client.example/metadata.json", "NotHttps"],
      ["https://client.example", "NoPath"],
      ["https://client.example/", "NoPath"],
      ["not a url", "NotAUrl"],
      ["https://client.example/metadata.json#frag", "Fragment"],
      ["https://user:pw@client.example/metadata.json", "Credentials"],
      // http: to a loopback host needs allowInsecureRequests.
      ["http://127.0.0.1:8080/metadata.json", "NotHttps"]
    ]
    for (const [url, reason] of refused) {
      let thrown: unknown
      try {
        ClientRegistration.make({ clientMetadataUrl: url })
      } catch (error) {
        thrown = error
      }
      assert.isDefined(thrown, `${url} is refused`)
      assert.instanceOf(thrown, ClientRegistration.InvalidClientMetadataUrl, url)
      const invalid = thrown as ClientRegistration.InvalidClientMetadataUrl
      assert.strictEqual(invalid.reason, reason, url)
      assert.include(invalid.message, JSON.stringify(url))
      assert.strictEqual(ClientRegistration.checkClientMetadataUrl(url)?.reason, reason)
    }
    assert.isUndefined(ClientRegistration.checkClientMetadataUrl(cimdUrl))
    assert.isUndefined(ClientRegistration.checkClientMetadataUrl("https://client.example/oauth/client?v=2"))
    // Loopback http: only with allowInsecureRequests, and a non-loopback host never.
    ClientRegistration.make({ clientMetadataUrl: "http://127.0.0.1:8080/metadata.json", allowInsecureRequests: true })
    assert.strictEqual(
      ClientRegistration.checkClientMetadataUrl("http://client.example/metadata.json", true)?.reason,
      "NotHttps"
    )
  })

  it.effect("the layer of a refused client ID metadata document URL dies with the typed error", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Effect.provide(
          Effect.service(ClientRegistration.ClientRegistration),
          ClientRegistration.layer({ clientMetadataUrl: "https://client.example" })
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.instanceOf(defect, ClientRegistration.InvalidClientMetadataUrl)
    })
  )

  it.effect("without a registration endpoint, dynamic registration fails naming why", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        ClientRegistration.make({}).register({ issuer: "https://as.example" }, requirements)
      )
      assert.include(error.message, "neither client ID metadata documents nor dynamic registration")
    })
  )
})

describe("Discovery helpers", () => {
  it("scope: the challenge's, else scopes_supported, else none", () => {
    const metadata = { resource: "https://h/mcp", scopes_supported: ["a", "b"] }
    assert.deepStrictEqual(Discovery.selectScope({ scope: ["step-up"] }, metadata), ["step-up"])
    assert.deepStrictEqual(Discovery.selectScope({ scope: [] }, metadata), ["a", "b"])
    assert.deepStrictEqual(Discovery.selectScope(undefined, metadata), ["a", "b"])
    assert.isUndefined(Discovery.selectScope(undefined, { resource: "https://h/mcp" }))
    assert.isUndefined(Discovery.selectScope(undefined, undefined))
  })

  it("a resource covers its own URL and the URLs under it at the same origin, nothing else", () => {
    assert.isTrue(Discovery.resourceCovers("https://h/mcp", "https://h/mcp"))
    assert.isTrue(Discovery.resourceCovers("https://h", "https://h/mcp"))
    assert.isTrue(Discovery.resourceCovers("https://h/", "https://h/mcp"))
    assert.isTrue(Discovery.resourceCovers("https://h/api", "https://h/api/mcp"))
    assert.isFalse(Discovery.resourceCovers("https://h/api", "https://h/apix"))
    assert.isFalse(Discovery.resourceCovers("https://h/mcp", "https://h/other"))
    assert.isFalse(Discovery.resourceCovers("https://evil/mcp", "https://h/mcp"))
    assert.isFalse(Discovery.resourceCovers("http://h/mcp", "https://h/mcp"))
    assert.isFalse(Discovery.resourceCovers("not a url", "https://h/mcp"))
  })

  it("the 2025-03-26 default endpoints sit at the origin", () => {
    const server = Discovery.defaultEndpoints("https://h")
    assert.strictEqual(server.authorization_endpoint, "https://h/authorize")
    assert.strictEqual(server.token_endpoint, "https://h/token")
    assert.strictEqual(server.registration_endpoint, "https://h/register")
  })
})
