/**
 * The client side of authorization against a real OpenID provider
 * (oidc-provider on 127.0.0.1) and a small protected resource server built
 * here with node:http: discovery from the resource's 401, the authorization
 * code grant with PKCE driven headlessly, refresh of an expired token, the
 * client credentials grant, and no token in any error or log line.
 */
import type { AddressInfo } from "node:net"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as Discovery from "@effect-mcp/auth/Discovery"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as ProtectedResource from "@effect-mcp/auth/ProtectedResource"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import type * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as NodeHttpClient from "@effect-mcp/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import * as jose from "jose"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as Headless from "./headlessUserAgent.ts"
import { listen } from "../support/Listen.ts"

/**
 * A protected resource at `<base>/mcp` whose tokens come from the provider:
 * metadata on the well-known paths, 401 with the challenge without a valid
 * token, 200 with the subject otherwise. `<base>/impostor` publishes metadata
 * for another resource; `<base>/legacy` has none (a 2025-03-26 server).
 */
const resourceServer = (issuer: () => string) =>
  Effect.gen(function* () {
    let protectedResource: ProtectedResource.ProtectedResourceShape | undefined
    let verifier: Layer.Layer<TokenVerifier.TokenVerifier> | undefined
    const server = yield* listen((request, response) => {
      const url = new URL(request.url ?? "/", base)
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))
      const pr = protectedResource!
      if (pr.metadataPaths.includes(url.pathname)) return json(200, pr.metadata)
      if (url.pathname === "/.well-known/oauth-protected-resource/impostor") {
        return json(200, { ...pr.metadata, resource: "http://elsewhere.example/mcp" })
      }
      if (url.pathname !== "/mcp") return json(404, {})
      Effect.runPromise(
        pr.authenticate({ url: request.url ?? "/", authorization: request.headers.authorization }).pipe(
          Effect.provide(verifier!),
          Effect.match({
            onSuccess: (principal) => json(200, { subject: principal.subject, scopes: principal.scopes }),
            onFailure: (error) => {
              const answer = pr.answer(error)
              json(answer.status, {}, answer.challenge === undefined ? {} : { "www-authenticate": answer.challenge })
            }
          })
        )
      )
    })
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const mcp = `${base}/mcp`
    const init = () => {
      protectedResource = ProtectedResource.make({
        resource: mcp,
        authorizationServers: [issuer()],
        scopesSupported: ["notes:read", "notes:write"],
        requiredScopes: ["notes:read"]
      })
      verifier = JwtVerifier.layer({
        issuer: issuer(),
        audience: mcp,
        allowInsecureRequests: true
      })
    }
    /** POSTs to the resource with `token`, returning the status and the challenge. */
    const call = (token: string | undefined) =>
      Effect.promise(async () => {
        const response = await fetch(mcp, {
          method: "POST",
          headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
        })
        const body = (await response.json()) as { readonly subject?: string; readonly scopes?: ReadonlyArray<string> }
        return { status: response.status, challenge: response.headers.get("www-authenticate") ?? undefined, body }
      })
    return { base, mcp, init, call }
  })

const redirectUri = "http://127.0.0.1:1/callback"

/** The provider and the resource server, wired to each other. */
const setup = (
  options: OidcProvider.StartOptions = {}
): Effect.Effect<
  { readonly op: OidcProvider.OidcProvider; readonly rs: Effect.Success<ReturnType<typeof resourceServer>> },
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    let issuer = ""
    const rs = yield* resourceServer(() => issuer)
    const op = yield* OidcProvider.startWith({
      ...options,
      acceptResource: (indicator) => indicator === rs.mcp
    })
    issuer = op.issuer
    rs.init()
    return { op, rs }
  })

/** Every log line of the effects it wraps, debug included. */
const capture = () => {
  const lines: Array<string> = []
  const layer = Logger.layer([
    Logger.make((options) => {
      lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`)
    })
  ])
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(Effect.provide(layer), Effect.provideService(References.MinimumLogLevel, "All"))
  return { lines, run }
}

const assertNoSecret = (texts: ReadonlyArray<string>, secrets: ReadonlyArray<string | undefined>) => {
  for (const secret of secrets) {
    if (secret === undefined) continue
    for (const text of texts) {
      assert.notInclude(text, secret)
      for (const part of secret.split(".")) if (part.length > 8) assert.notInclude(text, part)
    }
  }
}

/** A Clock `ms` milliseconds ahead of the real one. */
const clockAhead = (ms: number): Clock.Clock => {
  const now = () => Date.now() + ms
  return {
    currentTimeMillisUnsafe: now,
    currentTimeMillis: Effect.sync(now),
    monotonicTimeNanosUnsafe: () => BigInt(now()) * 1_000_000n,
    monotonicTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    currentTimeNanosUnsafe: () => BigInt(now()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    sleep: () => Effect.void
  }
}

const insecure = { allowInsecureRequests: true }

describe("Discovery", () => {
  it.live("from a 401: the challenge's metadata, then the authorization server's", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup()
      const answer = yield* rs.call(undefined)
      assert.strictEqual(answer.status, 401)
      const found = yield* Discovery.discover(rs.mcp, answer.challenge, insecure)
      assert.strictEqual(found.resource, rs.mcp)
      assert.strictEqual(found.authorizationServer.issuer, op.issuer)
      assert.strictEqual(found.authorizationServer.token_endpoint, `${op.issuer}/token`)
      // The challenge's scope (the required one) wins over scopes_supported.
      assert.deepStrictEqual(found.scope, ["notes:read"])
      assert.strictEqual(found.challenge?.resourceMetadata, `${rs.base}/.well-known/oauth-protected-resource/mcp`)
    })
  )

  it.live("without a challenge: the well-known URL; scopes_supported when the challenge names none", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup()
      const found = yield* Discovery.discover(rs.mcp, undefined, insecure)
      assert.strictEqual(found.authorizationServer.issuer, op.issuer)
      assert.deepStrictEqual(found.scope, ["notes:read", "notes:write"])
    })
  )

  it.live("metadata for another resource is refused, naming the URL", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup()
      const error = yield* Effect.flip(Discovery.discover(`${rs.base}/impostor`, undefined, insecure))
      assert.strictEqual(error._tag, "DiscoveryFailed")
      assert.include(error.message, "/.well-known/oauth-protected-resource/impostor")
      assert.include(error.message, "elsewhere.example")
    })
  )

  it.live(
    "a 2025-03-26 server (no resource metadata, no authorization server metadata) gets the default endpoints",
    () =>
      Effect.gen(function* () {
        const legacy = yield* listen((_request, response) => response.writeHead(404).end())
        const origin = `http://127.0.0.1:${(legacy.address() as AddressInfo).port}`
        const found = yield* Discovery.discover(`${origin}/mcp`, 'Bearer realm="mcp"', insecure)
        assert.isUndefined(found.resourceMetadata)
        assert.strictEqual(found.authorizationServer.authorization_endpoint, `${origin}/authorize`)
        assert.strictEqual(found.authorizationServer.token_endpoint, `${origin}/token`)
        assert.strictEqual(found.authorizationServer.registration_endpoint, `${origin}/register`)
      })
  )

  it.live("an https-only client refuses an http metadata URL", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup()
      const error = yield* Effect.flip(Discovery.discover(rs.mcp, undefined))
      assert.strictEqual(error._tag, "DiscoveryFailed")
      assert.include(error.message, "not an https URL")
    })
  )
})

/** An OAuth client on a memory store (or `store`), with the registration options and user agent given. */
const clientLayer = (
  options: OAuthClient.Options,
  registration: ClientRegistration.Options,
  userAgent?: UserAgent.UserAgentShape,
  store: TokenStore.TokenStoreShape = TokenStore.makeMemory()
) =>
  OAuthClient.layer({ ...insecure, ...options }).pipe(
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(TokenStore.TokenStore, store),
        ClientRegistration.layer({ ...insecure, ...registration }),
        userAgent === undefined ? Layer.empty : Layer.succeed(UserAgent.UserAgent, userAgent)
      )
    )
  )

describe("OAuthClient: authorization code with PKCE", () => {
  it.live("a pre-registered public client logs in headlessly; the token works; an expired one is refreshed", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup({ publicClient: { id: "mcp-cli", redirectUri } })
      const browser = Headless.make(redirectUri)
      const logs = capture()
      const tokens: Array<string> = []
      yield* logs.run(
        Effect.gen(function* () {
          const client = yield* OAuthClient.OAuthClient
          assert.isTrue(Option.isNone(yield* client.accessToken(rs.mcp)), "no token before a login")
          const first = yield* rs.call(undefined)
          const token = yield* client.authorize(rs.mcp, first.challenge)
          tokens.push(token)
          assert.strictEqual(browser.visits(), 1)
          const served = yield* rs.call(token)
          assert.strictEqual(served.status, 200)
          assert.strictEqual(served.body.subject, "alice")
          // Still valid: the same token, no request.
          assert.strictEqual(Option.getOrThrow(yield* client.accessToken(rs.mcp)), token)
          // Ten minutes on (the token lives five), the token is refreshed without a login.
          const refreshed = Option.getOrThrow(
            yield* client.accessToken(rs.mcp).pipe(Effect.provideService(Clock.Clock, clockAhead(10 * 60_000)))
          )
          tokens.push(refreshed)
          assert.notStrictEqual(refreshed, token)
          assert.strictEqual(browser.visits(), 1)
          assert.strictEqual((yield* rs.call(refreshed)).status, 200)
        }).pipe(Effect.provide(clientLayer({}, { preRegistered: { clientId: "mcp-cli" } }, browser.userAgent)))
      )
      assertNoSecret(logs.lines, tokens)
    })
  )

  it.live("a dynamically registered client (RFC 7591) logs in; a 401 on a revoked token refreshes first", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup({ registration: true })
      const browser = Headless.make(redirectUri)
      yield* Effect.gen(function* () {
        const client = yield* OAuthClient.OAuthClient
        const first = yield* rs.call(undefined)
        const token = yield* client.authorize(rs.mcp, first.challenge)
        assert.strictEqual((yield* rs.call(token)).status, 200)
        // The server refuses the token (as if revoked): the refresh token gets a new one, no second login.
        const again = yield* client.authorize(rs.mcp, 'Bearer error="invalid_token"', token)
        assert.notStrictEqual(again, token)
        assert.strictEqual(browser.visits(), 1)
        assert.strictEqual((yield* rs.call(again)).status, 200)
        // A late 401 for the old token (a concurrent request's) gets the renewed one, asking no one.
        assert.strictEqual(yield* client.authorize(rs.mcp, 'Bearer error="invalid_token"', token), again)
        assert.strictEqual(browser.visits(), 1)
      }).pipe(Effect.provide(clientLayer({}, { metadata: { client_name: "test" } }, browser.userAgent)))
    })
  )

  it.live("a 403 insufficient_scope logs in again for the challenge's scopes (no refresh: it never adds scopes)", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup({ publicClient: { id: "mcp-cli", redirectUri } })
      const browser = Headless.make(redirectUri)
      const store = TokenStore.makeMemory()
      yield* Effect.gen(function* () {
        const client = yield* OAuthClient.OAuthClient
        const first = yield* client.authorize(rs.mcp, (yield* rs.call(undefined)).challenge)
        assert.deepStrictEqual((yield* store.get(rs.mcp))?.scope, ["notes:read"])
        const stepUp = yield* client.authorize(
          rs.mcp,
          `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="${rs.base}/.well-known/oauth-protected-resource/mcp"`
        )
        assert.notStrictEqual(stepUp, first)
        assert.strictEqual(browser.visits(), 2)
        assert.deepStrictEqual((yield* store.get(rs.mcp))?.scope, ["notes:read", "notes:write"])
        assert.deepStrictEqual((yield* rs.call(stepUp)).body.scopes, ["notes:read", "notes:write"])
      }).pipe(Effect.provide(clientLayer({}, { preRegistered: { clientId: "mcp-cli" } }, browser.userAgent, store)))
    })
  )

  it.effect("a server URL that is not an http(s) URL fails discovery with a typed error", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Discovery.discover("mcp.example.com/mcp", undefined))
      assert.strictEqual(error._tag, "DiscoveryFailed")
      assert.include(error.message, "server URL")
    })
  )

  it.live("a refused refresh token forgets the tokens; errors and logs quote no token", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup({ publicClient: { id: "mcp-cli", redirectUri } })
      const store = TokenStore.makeMemory()
      const bogus = "refresh-token-that-the-provider-never-issued-0123456789"
      const access = "access-token-that-the-provider-never-issued-0123456789"
      yield* store.set(rs.mcp, {
        accessToken: access,
        refreshToken: bogus,
        expiresAt: 0,
        tokenType: "bearer",
        issuer: op.issuer
      })
      const logs = capture()
      const result = yield* logs.run(
        Effect.gen(function* () {
          const client = yield* OAuthClient.OAuthClient
          return yield* client.accessToken(rs.mcp)
        }).pipe(Effect.provide(clientLayer({}, { preRegistered: { clientId: "mcp-cli" } }, undefined, store)))
      )
      assert.isTrue(Option.isNone(result))
      assert.isUndefined(yield* store.get(rs.mcp))
      assert.isTrue(
        logs.lines.some((line) => line.includes("invalid_grant")),
        logs.lines.join("\n")
      )
      assertNoSecret(logs.lines, [bogus, access])
    })
  )
})

/** A user agent that logs in headlessly, then alters the redirect it returns. */
const tampering = (alter: (redirect: URL) => void) => {
  const browser = Headless.make(redirectUri)
  return UserAgent.make(redirectUri, (url) =>
    Effect.map(browser.userAgent.authorize(url), (redirect) => {
      const altered = new URL(redirect)
      alter(altered)
      return altered
    })
  )
}

describe("OAuthClient: the redirect's checks", () => {
  const cases: ReadonlyArray<readonly [string, (redirect: URL) => void, string]> = [
    ["another issuer in iss (RFC 9207: a mix-up)", (r) => r.searchParams.set("iss", "http://127.0.0.1:9/"), "iss"],
    ["no iss while the server advertises it", (r) => r.searchParams.delete("iss"), "iss"],
    ["another state", (r) => r.searchParams.set("state", "forged"), "state"],
    [
      "an error answer",
      (r) => {
        r.searchParams.delete("code")
        r.searchParams.set("error", "access_denied")
      },
      "access_denied"
    ]
  ]
  for (const [name, alter, named] of cases) {
    it.live(`a redirect with ${name} is refused before the code is used`, () =>
      Effect.gen(function* () {
        const { rs } = yield* setup({ publicClient: { id: "mcp-cli", redirectUri } })
        let code: string | undefined
        const userAgent = tampering((redirect) => {
          code = redirect.searchParams.get("code") ?? undefined
          alter(redirect)
        })
        const error = yield* Effect.flip(
          Effect.gen(function* () {
            const client = yield* OAuthClient.OAuthClient
            return yield* client.authorize(rs.mcp, (yield* rs.call(undefined)).challenge)
          }).pipe(Effect.provide(clientLayer({}, { preRegistered: { clientId: "mcp-cli" } }, userAgent)))
        )
        assert.strictEqual(error._tag, "AuthorizationFailed")
        assert.include(error.message, "redirect")
        assert.include(error.message, named)
        assertNoSecret([error.message, JSON.stringify(error)], [code])
      })
    )
  }

  it.live("oidc-provider advertises the iss parameter, so its absence is caught", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup()
      const found = yield* Discovery.discover(rs.mcp, undefined, insecure)
      assert.isTrue(found.authorizationServer.authorization_response_iss_parameter_supported)
    })
  )
})

/** A machine client's token for the resource, after the resource's 401, with pre-registered credentials. */
const machineToken = (
  rs: {
    readonly mcp: string
    readonly call: (token: string | undefined) => Effect.Effect<{ readonly challenge: string | undefined }>
  },
  credentials: ClientRegistration.ClientCredentials
) =>
  Effect.gen(function* () {
    const client = yield* OAuthClient.OAuthClient
    return yield* client.authorize(rs.mcp, (yield* rs.call(undefined)).challenge)
  }).pipe(Effect.provide(clientLayer({ grant: "client_credentials" }, { preRegistered: credentials })))

describe("OAuthClient: client credentials (SEP-1046)", () => {
  for (const authMethod of ["client_secret_basic", "client_secret_post"] as const) {
    it.live(`a machine client gets a token for the resource (${authMethod})`, () =>
      Effect.gen(function* () {
        const { op, rs } = yield* setup()
        const token = yield* machineToken(rs, { clientId: op.client.id, clientSecret: op.client.secret, authMethod })
        const served = yield* rs.call(token)
        assert.strictEqual(served.status, 200)
        assert.strictEqual(served.body.subject, op.client.id)
      })
    )
  }

  it.live("a machine client authenticating with private_key_jwt gets a token", () =>
    Effect.gen(function* () {
      const { privateKey, publicKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
      const publicJwk = { ...(yield* Effect.promise(() => jose.exportJWK(publicKey))), alg: "ES256", use: "sig" }
      const { op, rs } = yield* setup({ privateKeyJwtClient: { id: "machine", publicJwk } })
      const token = yield* machineToken(rs, { clientId: "machine", authMethod: "private_key_jwt", privateKey })
      const served = yield* rs.call(token)
      assert.strictEqual(served.status, 200)
      assert.strictEqual(served.body.subject, "machine")
      assert.notStrictEqual(op.client.id, "machine")
    })
  )

  it.live("a wrong secret fails with the OAuth error code, quoting no secret", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup()
      const secret = "a-wrong-secret-0123456789abcdef0123"
      const error = yield* Effect.flip(
        Effect.gen(function* () {
          const client = yield* OAuthClient.OAuthClient
          return yield* client.authorize(rs.mcp, undefined)
        }).pipe(
          Effect.provide(
            clientLayer(
              { grant: "client_credentials" },
              { preRegistered: { clientId: op.client.id, clientSecret: secret } }
            )
          )
        )
      )
      assert.strictEqual(error._tag, "AuthorizationFailed")
      assert.include(error.message, "invalid_client")
      assertNoSecret([error.message, JSON.stringify(error), String(error)], [secret])
    })
  )
})

describe("OAuthClient: concurrent refusals share one login", () => {
  /** `OAuthHttpClient` over undici and the OAuth client in context, for the resource. */
  const authenticated = (serverUrl: string) =>
    Effect.gen(function* () {
      const client = OAuthHttpClient.wrap(yield* HttpClient.HttpClient, yield* OAuthClient.OAuthClient, { serverUrl })
      // A POST to the resource; its status once the body is read.
      return client
        .execute(HttpClientRequest.post(serverUrl))
        .pipe(Effect.flatMap((response) => Effect.as(response.text, response.status)))
    })

  it.live("an expired token without a refresh token: three concurrent requests cost one login, not three", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup({ registration: true })
      const browser = Headless.make(redirectUri)
      const store = TokenStore.makeMemory()
      yield* Effect.gen(function* () {
        const post = yield* authenticated(rs.mcp)
        assert.strictEqual(yield* post, 200)
        assert.strictEqual(browser.visits(), 1)
        const stored = (yield* store.get(rs.mcp))!
        assert.isUndefined(stored.refreshToken, "registered without the refresh_token grant")
        yield* store.set(rs.mcp, { ...stored, expiresAt: 0 })
        const statuses = yield* Effect.all([post, post, post], { concurrency: "unbounded" })
        assert.deepStrictEqual(statuses, [200, 200, 200])
        assert.strictEqual(browser.visits(), 2, "one login for the three requests")
      }).pipe(
        Effect.provide(
          Layer.merge(
            clientLayer({}, { metadata: { grant_types: ["authorization_code"] } }, browser.userAgent, store),
            NodeHttpClient.layer
          )
        )
      )
    })
  )

  it.live("three concurrent 401s without a token, a refresh token at hand: one login, one token, no refresh", () =>
    Effect.gen(function* () {
      const { rs } = yield* setup({ registration: true })
      const browser = Headless.make(redirectUri)
      const store = TokenStore.makeMemory()
      yield* Effect.gen(function* () {
        const client = yield* OAuthClient.OAuthClient
        const challenge = (yield* rs.call(undefined)).challenge
        const tokens = yield* Effect.all(
          [1, 2, 3].map(() => client.authorize(rs.mcp, challenge)),
          { concurrency: "unbounded" }
        )
        assert.isDefined((yield* store.get(rs.mcp))?.refreshToken)
        assert.strictEqual(new Set(tokens).size, 1, "the queued callers take the first one's token")
        assert.strictEqual(browser.visits(), 1)
        assert.strictEqual((yield* rs.call(tokens[0])).status, 200)
      }).pipe(Effect.provide(clientLayer({}, {}, browser.userAgent, store)))
    })
  )
})
