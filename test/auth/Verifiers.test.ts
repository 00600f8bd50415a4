/**
 * The token verifiers against real authorization servers on 127.0.0.1:
 * `oidc-provider` (JWT access tokens for two audiences, opaque tokens and
 * introspection), and a local key set served by a small JWKS endpoint, for
 * what a real provider will not do on demand (a token already expired, a key
 * rotation, a forged signature). Every failure is checked to be the typed
 * error it should be, and no error or log line to quote the token.
 */
import type { AddressInfo } from "node:net"
import type * as AuthError from "@effect-mcp/auth/AuthError"
import * as IntrospectionVerifier from "@effect-mcp/auth/IntrospectionVerifier"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import type { TokenVerifierShape } from "@effect-mcp/auth/TokenVerifier"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import * as jose from "jose"
import * as OidcProvider from "../support/OidcProvider.ts"
import { listen } from "../support/Listen.ts"

/** Every log line of the effects it wraps, debug included. */
const capture = () => {
  const lines: Array<string> = []
  const layer = Logger.layer([
    Logger.make((options) => {
      lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`)
    })
  ])
  const run = <A, E>(effect: Effect.Effect<A, E>) =>
    effect.pipe(Effect.provide(layer), Effect.provideService(References.MinimumLogLevel, "All"))
  return { lines, run }
}

/** Verifies and expects a failure; the failure and the log lines must not quote the token. */
const refused = (verifier: TokenVerifierShape, token: string) =>
  Effect.gen(function* () {
    const logs = capture()
    const error = yield* Effect.flip(logs.run(verifier.verify(token)))
    const texts = [error.message, JSON.stringify(error), String(error), ...logs.lines]
    assert.isAbove(logs.lines.length, 0, "a refusal is logged")
    for (const text of texts) {
      assert.notInclude(text, token)
      // Nor any of its three parts (a JWT's signature alone is a secret-looking string).
      for (const part of token.split(".")) if (part.length > 8) assert.notInclude(text, part)
    }
    return error
  })

const reasonOf = (error: AuthError.InvalidToken | AuthError.VerifierUnavailable) =>
  error._tag === "InvalidToken" ? error.reason : error._tag

/** A key set served over HTTP on 127.0.0.1, counting its fetches; `keys` can be swapped (rotation), or the set be down (503). */
const jwksServer: Effect.Effect<
  {
    readonly url: string
    readonly fetches: () => number
    readonly serve: (keys: Array<jose.JWK> | "down") => void
  },
  never,
  Scope.Scope
> = Effect.gen(function* () {
  let keys: Array<jose.JWK> | "down" = []
  let fetches = 0
  const server = yield* listen((_request, response) => {
    fetches++
    if (keys === "down") response.writeHead(503).end()
    else response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys }))
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    fetches: () => fetches,
    serve: (next) => {
      keys = next
    }
  }
})

/** A signing key with its public JWK. */
const signingKey = (kid: string) =>
  Effect.promise(async () => {
    const { privateKey, publicKey } = await jose.generateKeyPair("ES256")
    return { kid, privateKey, jwk: { ...(await jose.exportJWK(publicKey)), kid, alg: "ES256", use: "sig" } }
  })

const localIssuer = "https://issuer.test"
const localAudience = "https://mcp.test/mcp"

const mint = (
  key: { readonly kid: string; readonly privateKey: jose.CryptoKey },
  claims: { readonly aud?: string; readonly exp?: number | null; readonly iss?: string } = {}
) =>
  Effect.promise(() => {
    const jwt = new jose.SignJWT({ scope: "notes:read", client_id: "c1" })
      .setProtectedHeader({ alg: "ES256", kid: key.kid, typ: "at+jwt" })
      .setIssuer(claims.iss ?? localIssuer)
      .setAudience(claims.aud ?? localAudience)
      .setSubject("alice")
      .setIssuedAt()
    if (claims.exp !== null) jwt.setExpirationTime(claims.exp ?? Math.floor(Date.now() / 1000) + 300)
    return jwt.sign(key.privateKey)
  })

/** A URL on 127.0.0.1 where nothing listens (a port just released). */
const deadUrl = Effect.scoped(
  Effect.map(
    listen(() => {}),
    (server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  )
)

describe("JwtVerifier against oidc-provider", () => {
  it.live("accepts a real token for its audience (keys found through the issuer's discovery)", () =>
    Effect.gen(function* () {
      const op = yield* OidcProvider.start
      const verifier = JwtVerifier.make({ issuer: op.issuer, audience: op.resource, allowInsecureRequests: true })
      const token = yield* op.token(op.resource, "notes:read")
      const principal = yield* verifier.verify(token)
      assert.strictEqual(principal.clientId, "test-client")
      assert.strictEqual(principal.issuer, op.issuer)
      assert.deepStrictEqual(principal.scopes, ["notes:read"])
      assert.deepStrictEqual(principal.audience, [op.resource])
      assert.isAbove(principal.expiresAt!, Date.now())
      // The verifier's time is Effect's Clock: ten minutes on, the real token (5-minute lifetime) has expired.
      const later = Date.now() + 10 * 60_000
      const clock: Clock.Clock = {
        currentTimeMillisUnsafe: () => later,
        currentTimeMillis: Effect.sync(() => later),
        monotonicTimeNanosUnsafe: () => BigInt(later) * 1_000_000n,
        monotonicTimeNanos: Effect.sync(() => BigInt(later) * 1_000_000n),
        currentTimeNanosUnsafe: () => BigInt(later) * 1_000_000n,
        currentTimeNanos: Effect.sync(() => BigInt(later) * 1_000_000n),
        sleep: () => Effect.void
      }
      const expired = yield* Effect.flip(verifier.verify(token).pipe(Effect.provideService(Clock.Clock, clock)))
      assert.strictEqual(reasonOf(expired), "Expired")
    }).pipe(Effect.scoped)
  )

  it.live("refuses another audience's token, and a token with a tampered signature", () =>
    Effect.gen(function* () {
      const op = yield* OidcProvider.start
      const verifier = JwtVerifier.make({ issuer: op.issuer, audience: op.resource, allowInsecureRequests: true })
      const other = yield* op.token(op.otherResource)
      assert.strictEqual(reasonOf(yield* refused(verifier, other)), "WrongAudience")
      const good = yield* op.token(op.resource)
      const [header, payload, signature] = good.split(".") as [string, string, string]
      const flipped = `${signature.slice(0, 10)}${signature[10] === "A" ? "B" : "A"}${signature.slice(11)}`
      assert.strictEqual(reasonOf(yield* refused(verifier, `${header}.${payload}.${flipped}`)), "BadSignature")
      // The payload of the other audience's token under this one's signature: the signature no longer matches.
      const spliced = `${header}.${other.split(".")[1]}.${signature}`
      assert.strictEqual(reasonOf(yield* refused(verifier, spliced)), "BadSignature")
      assert.strictEqual(reasonOf(yield* refused(verifier, "not-a-jwt")), "Malformed")
      // Another issuer expected: the same valid token is refused.
      const strict = JwtVerifier.make({
        issuer: `${op.issuer}/`,
        audience: op.resource,
        jwksUri: `${op.issuer}/jwks`
      })
      assert.strictEqual(reasonOf(yield* refused(strict, good)), "WrongIssuer")
    }).pipe(Effect.scoped)
  )
})

describe("JwtVerifier against a local key set", () => {
  it.live("refuses an expired token, and accepts it within the clock tolerance", () =>
    Effect.gen(function* () {
      const jwks = yield* jwksServer
      const key = yield* signingKey("k1")
      jwks.serve([key.jwk])
      const expired = yield* mint(key, { exp: Math.floor(Date.now() / 1000) - 60 })
      const verifier = JwtVerifier.make({ issuer: localIssuer, audience: localAudience, jwksUri: jwks.url })
      assert.strictEqual(reasonOf(yield* refused(verifier, expired)), "Expired")
      const tolerant = JwtVerifier.make({
        issuer: localIssuer,
        audience: localAudience,
        jwksUri: jwks.url,
        clockTolerance: "2 minutes",
        typ: "at+jwt"
      })
      const principal = yield* tolerant.verify(expired)
      assert.strictEqual(principal.subject, "alice")
      // A token that never expires is refused.
      assert.strictEqual(reasonOf(yield* refused(verifier, yield* mint(key, { exp: null }))), "InvalidClaims")
      // An algorithm outside the allow-list is refused before any key is used.
      const es384Only = JwtVerifier.make({
        issuer: localIssuer,
        audience: localAudience,
        jwksUri: jwks.url,
        algorithms: ["ES384"]
      })
      assert.strictEqual(reasonOf(yield* refused(es384Only, yield* mint(key))), "AlgorithmNotAllowed")
    }).pipe(Effect.scoped)
  )

  it.live("an unknown kid after a key rotation fetches the key set once more; within the cooldown it does not", () =>
    Effect.gen(function* () {
      const jwks = yield* jwksServer
      const [k1, k2, k3] = [yield* signingKey("k1"), yield* signingKey("k2"), yield* signingKey("k3")]
      jwks.serve([k1.jwk])
      const options = { issuer: localIssuer, audience: localAudience, jwksUri: jwks.url }
      const rotating = JwtVerifier.make({ ...options, cooldown: 0 })
      assert.strictEqual(jwks.fetches(), 0, "nothing is fetched before the first token")
      yield* rotating.verify(yield* mint(k1))
      yield* rotating.verify(yield* mint(k1))
      assert.strictEqual(jwks.fetches(), 1, "the key set is cached")
      jwks.serve([k2.jwk])
      yield* rotating.verify(yield* mint(k2))
      assert.strictEqual(jwks.fetches(), 2, "the new kid prompted exactly one fetch")

      const guarded = JwtVerifier.make(options)
      yield* guarded.verify(yield* mint(k2))
      const before = jwks.fetches()
      for (let i = 0; i < 5; i++) assert.strictEqual(reasonOf(yield* refused(guarded, yield* mint(k3))), "UnknownKey")
      assert.strictEqual(jwks.fetches(), before, "unknown kids within the cooldown fetch nothing")
    }).pipe(Effect.scoped)
  )

  it.live("an unreachable issuer or key set is VerifierUnavailable, and the verifier recovers when it is back", () =>
    Effect.gen(function* () {
      const dead = yield* deadUrl
      const viaIssuer = JwtVerifier.make({ issuer: dead, audience: localAudience, allowInsecureRequests: true })
      const key = yield* signingKey("k1")
      const token = yield* mint(key)
      const first = yield* refused(viaIssuer, token)
      assert.strictEqual(first._tag, "VerifierUnavailable")
      assert.include(first.message, "ECONNREFUSED")
      const viaJwks = JwtVerifier.make({ issuer: localIssuer, audience: localAudience, jwksUri: `${dead}/jwks` })
      assert.strictEqual((yield* refused(viaJwks, token))._tag, "VerifierUnavailable")

      // A key set that answers 503, then comes back: the same verifier then accepts the token.
      const jwks = yield* jwksServer
      jwks.serve("down")
      const later = JwtVerifier.make({ issuer: localIssuer, audience: localAudience, jwksUri: jwks.url })
      assert.strictEqual((yield* refused(later, token))._tag, "VerifierUnavailable")
      jwks.serve([key.jwk])
      assert.strictEqual((yield* later.verify(token)).subject, "alice")
    }).pipe(Effect.scoped)
  )
})

describe("IntrospectionVerifier against oidc-provider", () => {
  it.live("accepts an opaque token for its audience; refuses another audience's and an unknown one", () =>
    Effect.gen(function* () {
      const op = yield* OidcProvider.start
      const verifier = IntrospectionVerifier.make({
        issuer: op.issuer,
        audience: op.opaqueResource,
        clientId: op.introspector.id,
        clientSecret: op.introspector.secret,
        allowInsecureRequests: true
      })
      const token = yield* op.token(op.opaqueResource, "notes:write")
      assert.notInclude(token, ".", "an opaque token")
      const principal = yield* verifier.verify(token)
      assert.strictEqual(principal.clientId, "test-client")
      assert.deepStrictEqual(principal.scopes, ["notes:write"])
      assert.deepStrictEqual(principal.audience, [op.opaqueResource])
      // The same token at another resource: it was not issued for that one.
      const elsewhere = IntrospectionVerifier.make({
        issuer: op.issuer,
        audience: op.otherResource,
        clientId: op.introspector.id,
        clientSecret: op.introspector.secret,
        allowInsecureRequests: true
      })
      assert.strictEqual(reasonOf(yield* refused(elsewhere, token)), "WrongAudience")
      // A JWT access token, which oidc-provider will not introspect (`unsupported_token_type`): not vouched for.
      assert.strictEqual(reasonOf(yield* refused(verifier, yield* op.token(op.resource))), "Inactive")
      assert.strictEqual(reasonOf(yield* refused(verifier, "made-up-token-0123456789")), "Inactive")
    }).pipe(Effect.scoped)
  )

  it.live("answers are reused until cacheMaxAge (never past the token's expiry); refusals are not", () =>
    Effect.gen(function* () {
      const op = yield* OidcProvider.start
      // A counting proxy in front of the introspection endpoint.
      let calls = 0
      const proxy = yield* listen((request, response) => {
        calls++
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          fetch(`${op.issuer}/token/introspection`, {
            method: "POST",
            headers: {
              authorization: request.headers.authorization ?? "",
              "content-type": request.headers["content-type"] ?? ""
            },
            body: Buffer.concat(chunks)
          }).then(async (answer) => {
            response.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text())
          })
        })
      })
      const options = {
        issuer: op.issuer,
        audience: op.opaqueResource,
        introspectionEndpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/introspect`,
        clientId: op.introspector.id,
        clientSecret: op.introspector.secret,
        allowInsecureRequests: true
      }
      const token = yield* op.token(op.opaqueResource)
      const cached = IntrospectionVerifier.make(options)
      yield* cached.verify(token)
      yield* cached.verify(token)
      assert.strictEqual(calls, 1, "the second verification reused the answer")
      yield* refused(cached, "made-up-token-0123456789")
      yield* refused(cached, "made-up-token-0123456789")
      assert.strictEqual(calls, 3, "refusals are asked again")
      const uncached = IntrospectionVerifier.make({ ...options, cacheMaxAge: 0 })
      yield* uncached.verify(token)
      yield* uncached.verify(token)
      assert.strictEqual(calls, 5)
    }).pipe(Effect.scoped)
  )

  it.live("wrong client credentials or an unreachable endpoint are VerifierUnavailable", () =>
    Effect.gen(function* () {
      const op = yield* OidcProvider.start
      const token = yield* op.token(op.opaqueResource)
      const badClient = IntrospectionVerifier.make({
        issuer: op.issuer,
        audience: op.opaqueResource,
        clientId: op.introspector.id,
        clientSecret: "wrong-secret",
        clientAuthentication: "client_secret_post",
        allowInsecureRequests: true
      })
      const error = yield* refused(badClient, token)
      assert.strictEqual(error._tag, "VerifierUnavailable")
      const dead = yield* deadUrl
      const unreachable = IntrospectionVerifier.make({
        issuer: dead,
        audience: op.opaqueResource,
        clientId: op.introspector.id,
        clientSecret: op.introspector.secret,
        allowInsecureRequests: true
      })
      assert.strictEqual((yield* refused(unreachable, token))._tag, "VerifierUnavailable")
    }).pipe(Effect.scoped)
  )
})
