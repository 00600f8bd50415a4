/**
 * Every response body the OAuth client and the verifiers read is bounded
 * (`maxResponseBytes`, 1 MiB by default): a hostile or broken server that
 * answers with a huge document makes the step fail with the URL and the
 * limit named, once that many bytes have arrived. A listener on 127.0.0.1
 * streams 32 MiB from one 64 KiB buffer (nothing large is allocated) with
 * backpressure, and records whether it could write it all: it cannot, when
 * the client stops reading and closes the connection.
 */
import type * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as Discovery from "@effect-mcp/auth/Discovery"
import * as IntrospectionVerifier from "@effect-mcp/auth/IntrospectionVerifier"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as jose from "jose"
import { listen } from "../support/Listen.ts"

const chunk = Buffer.alloc(64 * 1024, 0x61)
/** Far more than loopback socket buffers hold, so the server cannot finish unless the client reads it all. */
const hugeBytes = 32 * 1024 * 1024
const limit = 64 * 1024

/** Streams a JSON object of `hugeBytes` (a Content-Length announcing it when `declare`); resolves with whether it all went out. */
const streamHuge = async (response: http.ServerResponse, declare: boolean): Promise<boolean> => {
  const head = '{"x":"'
  const tail = '"}'
  response.writeHead(200, {
    "content-type": "application/json",
    ...(declare ? { "content-length": String(head.length + hugeBytes + tail.length) } : {})
  })
  response.write(head)
  for (let sent = 0; sent < hugeBytes && !response.destroyed; sent += chunk.length) {
    if (!response.write(chunk)) {
      await new Promise<void>((resolve) => {
        response.once("drain", resolve)
        response.once("close", resolve)
      })
    }
  }
  if (response.destroyed) return false
  await new Promise<void>((resolve) => response.end(tail, resolve))
  return true
}

/**
 * An MCP server that is its own authorization server (small metadata, a
 * token endpoint, a registration endpoint, a key set, an introspection
 * endpoint), where the paths in `huge` answer with a huge body instead.
 * `outcome(path)` resolves once that huge answer ended: true if it was all
 * written, false if the client closed the connection first.
 */
const hostile = (huge: ReadonlyArray<string>, declare = false) =>
  Effect.gen(function* () {
    const outcomes = new Map<string, Promise<boolean>>()
    let base = ""
    const server = yield* listen((request, response) => {
      const path = request.url ?? "/"
      request.resume()
      if (huge.includes(path)) {
        outcomes.set(path, streamHuge(response, declare))
        return
      }
      const json = (body: object) =>
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
      if (path.startsWith("/.well-known/oauth-protected-resource")) {
        return json({ resource: `${base}/mcp`, authorization_servers: [base] })
      }
      if (path === "/.well-known/oauth-authorization-server") {
        return json({
          issuer: base,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          introspection_endpoint: `${base}/introspect`,
          jwks_uri: `${base}/jwks`
        })
      }
      response.writeHead(404).end()
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const outcome = (path: string) =>
      Effect.promise(() => outcomes.get(path) ?? Promise.reject(new Error(`${path} not asked`)))
    return { base, outcome }
  })

const bounded = { allowInsecureRequests: true, maxResponseBytes: limit }

/** A well-formed JWT (its header is read before any key is fetched). */
const someJwt = Effect.promise(async () => {
  const { privateKey } = await jose.generateKeyPair("ES256")
  return new jose.SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setExpirationTime("5 minutes")
    .sign(privateKey)
})

const quiet = Logger.layer([])

describe("response bodies are read up to maxResponseBytes", () => {
  it.live("protected resource metadata: DiscoveryFailed naming the URL and the limit; the rest is not read", () =>
    Effect.gen(function* () {
      const path = "/.well-known/oauth-protected-resource/mcp"
      const server = yield* hostile([path])
      const error = yield* Effect.flip(Discovery.protectedResourceMetadata(`${server.base}/mcp`, undefined, bounded))
      assert.isFalse(yield* server.outcome(path), "the client closed the connection before the body ended")
      assert.strictEqual(error._tag, "DiscoveryFailed")
      assert.strictEqual(error.url, `${server.base}${path}`)
      assert.include(error.message, `larger than the ${limit}-byte limit`)
    }).pipe(Effect.scoped)
  )

  it.live("a Content-Length over the limit fails before the body is read", () =>
    Effect.gen(function* () {
      const path = "/.well-known/oauth-protected-resource/mcp"
      const server = yield* hostile([path], true)
      const error = yield* Effect.flip(Discovery.protectedResourceMetadata(`${server.base}/mcp`, undefined, bounded))
      assert.include(error.message, `larger than the ${limit}-byte limit`)
      assert.isFalse(yield* server.outcome(path))
    }).pipe(Effect.scoped)
  )

  it.live("by default the limit is 1 MiB", () =>
    Effect.gen(function* () {
      const path = "/.well-known/oauth-protected-resource/mcp"
      const server = yield* hostile([path])
      const error = yield* Effect.flip(
        Discovery.protectedResourceMetadata(`${server.base}/mcp`, undefined, { allowInsecureRequests: true })
      )
      assert.include(error.message, "larger than the 1048576-byte limit")
      assert.isFalse(yield* server.outcome(path))
    }).pipe(Effect.scoped)
  )

  it.live("authorization server metadata: the failure names the URL and the limit", () =>
    Effect.gen(function* () {
      const path = "/.well-known/oauth-authorization-server"
      const server = yield* hostile([path])
      const error = yield* Effect.flip(Discovery.authorizationServerMetadata(server.base, bounded))
      assert.strictEqual(error._tag, "DiscoveryFailed")
      assert.include(error.message, `${server.base}${path}: the answer is larger than the ${limit}-byte limit`)
      assert.isFalse(yield* server.outcome(path))
    }).pipe(Effect.scoped)
  )

  it.live("the token endpoint's answer: AuthorizationFailed naming the URL and the limit", () =>
    Effect.gen(function* () {
      const server = yield* hostile(["/token"])
      const error = yield* Effect.flip(
        Effect.flatMap(OAuthClient.OAuthClient, (client) => client.authorize(`${server.base}/mcp`, undefined)).pipe(
          Effect.provide(
            OAuthClient.layer({ ...bounded, grant: "client_credentials" }).pipe(
              Layer.provide(
                Layer.merge(
                  TokenStore.layerMemory,
                  ClientRegistration.layer({ preRegistered: { clientId: "machine", clientSecret: "s" } })
                )
              )
            )
          )
        )
      )
      assert.strictEqual(error._tag, "AuthorizationFailed")
      assert.include(error.message, `${server.base}/token`)
      assert.include(error.message, `larger than the ${limit}-byte limit`)
      assert.isFalse(yield* server.outcome("/token"))
    }).pipe(Effect.scoped)
  )

  it.live("a dynamic registration's answer: RegistrationFailed naming the URL and the limit", () =>
    Effect.gen(function* () {
      const server = yield* hostile(["/register"])
      const error = yield* Effect.flip(
        ClientRegistration.make(bounded).register(
          { issuer: server.base, registration_endpoint: `${server.base}/register` },
          { redirectUris: ["http://127.0.0.1:9/callback"], grantTypes: ["authorization_code"] }
        )
      )
      assert.strictEqual(error._tag, "RegistrationFailed")
      assert.include(error.message, `${server.base}/register`)
      assert.include(error.message, `larger than the ${limit}-byte limit`)
      assert.isFalse(yield* server.outcome("/register"))
    }).pipe(Effect.scoped)
  )

  it.live("a JWT verifier's key set, and its issuer's metadata: VerifierUnavailable naming the URL and the limit", () =>
    Effect.gen(function* () {
      const token = yield* someJwt
      const jwks = yield* hostile(["/jwks"])
      const viaJwks = JwtVerifier.make({ ...bounded, issuer: jwks.base, audience: "a", jwksUri: `${jwks.base}/jwks` })
      const keySet = yield* Effect.flip(viaJwks.verify(token).pipe(Effect.provide(quiet)))
      assert.strictEqual(keySet._tag, "VerifierUnavailable")
      assert.include(keySet.message, `${jwks.base}/jwks`)
      assert.include(keySet.message, `larger than the ${limit}-byte limit`)
      assert.isFalse(yield* jwks.outcome("/jwks"))

      const metadata = yield* hostile(["/.well-known/oauth-authorization-server"])
      const viaIssuer = JwtVerifier.make({ ...bounded, issuer: metadata.base, audience: "a" })
      const error = yield* Effect.flip(viaIssuer.verify(token).pipe(Effect.provide(quiet)))
      assert.strictEqual(error._tag, "VerifierUnavailable")
      assert.include(error.message, `larger than the ${limit}-byte limit`)
      assert.isFalse(yield* metadata.outcome("/.well-known/oauth-authorization-server"))
    }).pipe(Effect.scoped)
  )

  it.live("an introspection answer: VerifierUnavailable naming the URL and the limit", () =>
    Effect.gen(function* () {
      const server = yield* hostile(["/introspect"])
      const verifier = IntrospectionVerifier.make({
        ...bounded,
        issuer: server.base,
        audience: "a",
        introspectionEndpoint: `${server.base}/introspect`,
        clientId: "rs",
        clientSecret: "rs-secret"
      })
      const error = yield* Effect.flip(verifier.verify("an-opaque-token").pipe(Effect.provide(quiet)))
      assert.strictEqual(error._tag, "VerifierUnavailable")
      assert.include(error.message, `${server.base}/introspect`)
      assert.include(error.message, `larger than the ${limit}-byte limit`)
      assert.isFalse(yield* server.outcome("/introspect"))
    }).pipe(Effect.scoped)
  )
})
