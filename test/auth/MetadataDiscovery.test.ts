/**
 * Where the client and the verifiers look for an authorization server's
 * metadata (MCP 2025-11-25, "Authorization Server Metadata Discovery"): for an
 * issuer with a path, RFC 8414 with the path inserted, OpenID Connect
 * discovery with the path inserted, then OpenID Connect with the path
 * appended; for an issuer without a path, RFC 8414's and OpenID Connect's root
 * URLs. A listener on 127.0.0.1 publishes the metadata at one of them and
 * records every request, so the order (and where it stops) is what the
 * client actually asked for.
 */
import type { AddressInfo } from "node:net"
import * as Discovery from "@effect-mcp/auth/Discovery"
import * as IntrospectionVerifier from "@effect-mcp/auth/IntrospectionVerifier"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as jose from "jose"
import { listen } from "../support/Listen.ts"

const audience = "https://mcp.test/mcp"

/**
 * An MCP server and its authorization server at one origin: the resource
 * metadata of `/mcp` names `<origin><issuerPath>`, whose metadata is served at
 * `metadataPath` only (every other well-known URL is 404), with a key set at
 * `/jwks`. `seen` lists the paths requested, with their MCP-Protocol-Version.
 */
const origin = (issuerPath: string, metadataPath: string | undefined) =>
  Effect.gen(function* () {
    const seen: Array<{ readonly path: string; readonly version: string | undefined }> = []
    const { privateKey, publicKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
    const jwk = { ...(yield* Effect.promise(() => jose.exportJWK(publicKey))), kid: "k1", alg: "ES256", use: "sig" }
    let base = ""
    const server = yield* listen((request, response) => {
      const path = request.url ?? "/"
      const version = request.headers["mcp-protocol-version"]
      seen.push({ path, version: typeof version === "string" ? version : undefined })
      const json = (body: object) =>
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
      const issuer = `${base}${issuerPath}`
      if (path === "/.well-known/oauth-protected-resource/mcp") {
        return json({ resource: `${base}/mcp`, authorization_servers: [issuer] })
      }
      if (path === metadataPath) {
        return json({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: `${issuer}/token`,
          introspection_endpoint: `${base}/introspect`,
          jwks_uri: `${base}/jwks`,
          response_types_supported: ["code"],
          code_challenge_methods_supported: ["S256"]
        })
      }
      if (path === "/jwks") return json({ keys: [jwk] })
      response.writeHead(404).end()
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const issuer = `${base}${issuerPath}`
    const token = yield* Effect.promise(() =>
      new jose.SignJWT({ scope: "notes:read", client_id: "c1" })
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject("alice")
        .setIssuedAt()
        .setExpirationTime("5 minutes")
        .sign(privateKey)
    )
    /** The well-known paths requested, in order. */
    const wellKnown = () => seen.map((s) => s.path).filter((p) => !p.includes("oauth-protected-resource"))
    return { base, issuer, seen, wellKnown, token }
  })

const insecure = { allowInsecureRequests: true }

describe("authorization server metadata discovery (MCP 2025-11-25 order)", () => {
  it.live("an issuer with a path publishing only OpenID Connect discovery with path insertion is found there", () =>
    Effect.gen(function* () {
      const as = yield* origin("/tenant1", "/.well-known/openid-configuration/tenant1")
      const found = yield* Discovery.discover(`${as.base}/mcp`, undefined, insecure)
      assert.strictEqual(found.authorizationServer.issuer, as.issuer)
      assert.deepStrictEqual(as.wellKnown(), [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1"
      ])
      assert.deepStrictEqual(
        as.seen.filter((s) => s.version !== Discovery.defaultProtocolVersion),
        [],
        "every request names the revision"
      )
    }).pipe(Effect.scoped)
  )

  it.live("an issuer with a path: the three URLs in order, and a failure names each with its answer", () =>
    Effect.gen(function* () {
      const as = yield* origin("/tenant1", undefined)
      const error = yield* Effect.flip(Discovery.authorizationServerMetadata(as.issuer, insecure))
      const expected = [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration"
      ]
      assert.deepStrictEqual(as.wellKnown(), expected)
      assert.strictEqual(error._tag, "DiscoveryFailed")
      for (const path of expected) assert.include(error.message, `${as.base}${path}: answered 404`)
    }).pipe(Effect.scoped)
  )

  it.live("the path-appended URL is the last resort, and a trailing slash is not inserted", () =>
    Effect.gen(function* () {
      const as = yield* origin("/tenant1/", "/tenant1/.well-known/openid-configuration")
      const found = yield* Discovery.authorizationServerMetadata(as.issuer, insecure)
      assert.strictEqual(found.issuer, as.issuer)
      assert.deepStrictEqual(as.wellKnown(), [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration"
      ])
    }).pipe(Effect.scoped)
  )

  it.live("an issuer without a path: RFC 8414's URL, then OpenID Connect's", () =>
    Effect.gen(function* () {
      const as = yield* origin("", "/.well-known/openid-configuration")
      const found = yield* Discovery.authorizationServerMetadata(as.issuer, insecure)
      assert.strictEqual(found.issuer, as.issuer)
      assert.deepStrictEqual(as.wellKnown(), [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration"
      ])
    }).pipe(Effect.scoped)
  )

  it.live("metadata naming another issuer is not used, and the next URL is tried", () =>
    Effect.gen(function* () {
      // The document at /tenant2's first URL names /tenant1: refused, and the two other URLs are asked.
      const as = yield* origin("/tenant1", "/.well-known/oauth-authorization-server/tenant2")
      const error = yield* Effect.flip(Discovery.authorizationServerMetadata(`${as.base}/tenant2`, insecure))
      assert.include(
        error.message,
        `/.well-known/oauth-authorization-server/tenant2: "response" body "issuer" property does not match`
      )
      assert.include(error.message, "/tenant2/.well-known/openid-configuration: answered 404")
      assert.strictEqual(as.wellKnown().length, 3)
    }).pipe(Effect.scoped)
  )

  it.live("an authorization server that does not answer is asked once, not at every URL", () =>
    Effect.gen(function* () {
      const paths: Array<string> = []
      // Accepts the request and never answers: the client's timeout ends it.
      const silent = yield* listen((request) => {
        paths.push(request.url ?? "/")
      })
      const issuer = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/tenant1`
      const error = yield* Effect.flip(
        Discovery.authorizationServerMetadata(issuer, { ...insecure, timeout: "200 millis" })
      )
      assert.deepStrictEqual(paths, ["/.well-known/oauth-authorization-server/tenant1"])
      assert.include(error.message, "/.well-known/oauth-authorization-server/tenant1: the request timed out")
    }).pipe(Effect.scoped)
  )

  it.live("the verifiers look in the same order: a JWT verifier finds the key set of such an issuer", () =>
    Effect.gen(function* () {
      const as = yield* origin("/tenant1", "/.well-known/openid-configuration/tenant1")
      const verifier = JwtVerifier.make({ issuer: as.issuer, audience, ...insecure })
      const principal = yield* verifier.verify(as.token)
      assert.strictEqual(principal.subject, "alice")
      assert.deepStrictEqual(as.wellKnown(), [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/jwks"
      ])
    }).pipe(Effect.scoped)
  )

  it.live("an introspecting verifier finds its endpoint in such an issuer's metadata", () =>
    Effect.gen(function* () {
      const as = yield* origin("/tenant1", "/.well-known/openid-configuration/tenant1")
      const verifier = IntrospectionVerifier.make({
        issuer: as.issuer,
        audience,
        clientId: "rs",
        clientSecret: "rs-secret",
        ...insecure
      })
      // The endpoint is found; it is 404 here, so the token cannot be verified, but the request went there.
      const error = yield* Effect.flip(verifier.verify(as.token).pipe(Effect.provide(Logger.layer([]))))
      assert.strictEqual(error._tag, "VerifierUnavailable")
      assert.include(
        as.seen.map((s) => s.path),
        "/introspect"
      )
    }).pipe(Effect.scoped)
  )
})
