/**
 * The authorization extensions of the client: DPoP against a real OpenID
 * provider (oidc-provider binds the token to the client's key) and a resource
 * server that checks each proof with oauth4webapi's RFC 9449 validation
 * (server nonces on both sides), and the JWT bearer grant (workload identity,
 * and enterprise-managed authorization with an ID-JAG from an identity
 * provider's token exchange) against small servers built here with jose, since
 * oidc-provider has neither grant.
 */
import type * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as Dpop from "@effect-mcp/auth/Dpop"
import * as IdentityAssertion from "@effect-mcp/auth/IdentityAssertion"
import * as JwtBearer from "@effect-mcp/auth/JwtBearer"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as OAuthHttpClient from "@effect-mcp/auth/OAuthHttpClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as jose from "jose"
import * as oauth from "oauth4webapi"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as Headless from "./headlessUserAgent.ts"
import { listen } from "../support/Listen.ts"

const json = (response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))

const baseOf = (server: http.Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const readForm = (request: http.IncomingMessage) =>
  new Promise<URLSearchParams>((resolve) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
    request.on("end", () => resolve(new URLSearchParams(body)))
  })

const headersOf = (request: http.IncomingMessage) =>
  new Headers(
    Object.entries(request.headers).flatMap(
      ([name, value]): Array<[string, string]> =>
        value === undefined ? [] : Array.isArray(value) ? value.map((v) => [name, v]) : [[name, value]]
    )
  )

/**
 * A protected resource at `<base>/mcp` taking DPoP-bound JWT access tokens
 * from `issuer`: each request's token, proof (`htm`, `htu`, `ath`, signature,
 * key thumbprint against `cnf.jkt`) checked by oauth4webapi; with `nonce`, a
 * proof without it gets the `use_dpop_nonce` challenge.
 */
const dpopResource = (issuer: () => string, nonce?: string) =>
  Effect.gen(function* () {
    const server = yield* listen((request, response) => {
      const url = new URL(request.url ?? "/", base)
      const metadata = `${base}/.well-known/oauth-protected-resource/mcp`
      if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
        return json(response, 200, {
          resource: mcp,
          authorization_servers: [issuer()],
          scopes_supported: ["notes:read"]
        })
      }
      if (request.headers.authorization === undefined) {
        return json(response, 401, {}, { "www-authenticate": `DPoP resource_metadata="${metadata}"` })
      }
      const proof = request.headers.dpop
      if (nonce !== undefined && (typeof proof !== "string" || jose.decodeJwt(proof).nonce !== nonce)) {
        return json(response, 401, {}, { "www-authenticate": 'DPoP error="use_dpop_nonce"', "dpop-nonce": nonce })
      }
      const as: oauth.AuthorizationServer = { issuer: issuer(), jwks_uri: `${issuer()}/jwks` }
      oauth
        .validateJwtAccessToken(
          as,
          new Request(url, { method: request.method ?? "GET", headers: headersOf(request) }),
          mcp,
          { requireDPoP: true, [oauth.allowInsecureRequests]: true }
        )
        .then(
          (claims) => json(response, 200, { subject: claims.sub }),
          () => json(response, 401, {}, { "www-authenticate": 'DPoP error="invalid_token"' })
        )
    })
    const base = baseOf(server)
    const mcp = `${base}/mcp`
    const call = (headers: Record<string, string>, target = mcp) =>
      Effect.promise(async () => {
        const response = await fetch(target, { method: "POST", headers })
        await response.body?.cancel()
        return response
      })
    return { mcp, call }
  })

/** oidc-provider and the DPoP resource server, wired to each other. */
const setup = (
  dpop: OidcProvider.StartOptions["dpop"],
  resourceNonce?: string,
  publicClient?: OidcProvider.StartOptions["publicClient"]
) =>
  Effect.gen(function* () {
    let issuer = ""
    const rs = yield* dpopResource(() => issuer, resourceNonce)
    const op = yield* OidcProvider.startWith({
      dpop,
      publicClient,
      acceptResource: (indicator) => indicator === rs.mcp
    })
    issuer = op.issuer
    return { op, rs }
  })

/** A machine client of `op` (client credentials) with the DPoP key `key`. */
const machineClient = (op: OidcProvider.OidcProvider, key: Dpop.DpopShape) =>
  OAuthClient.layer({ grant: "client_credentials", allowInsecureRequests: true }).pipe(
    Layer.provide(
      Layer.mergeAll(
        TokenStore.layerMemory,
        ClientRegistration.layer({
          preRegistered: { clientId: op.client.id, clientSecret: op.client.secret },
          allowInsecureRequests: true
        }),
        Layer.succeed(Dpop.Dpop, key)
      )
    )
  )

/** The token `op` issues the machine client with the DPoP key `key` for `server`. */
const tokenWith = (op: OidcProvider.OidcProvider, key: Dpop.DpopShape, server: string) =>
  Effect.gen(function* () {
    const client = yield* OAuthClient.OAuthClient
    return yield* client.authorize(server, undefined)
  }).pipe(Effect.provide(machineClient(op, key)))

describe("DPoP (RFC 9449)", () => {
  it.live("the token is bound to the client's key and accepted with a fresh proof per request", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup(true)
      const key = yield* Dpop.make()
      const token = yield* tokenWith(op, key, rs.mcp)
      assert.strictEqual((jose.decodeJwt(token).cnf as { jkt?: string } | undefined)?.jkt, yield* key.thumbprint)
      assert.isTrue(key.isBound(token))

      const first = yield* key.present("POST", rs.mcp, token)
      const second = yield* key.present("post", `${rs.mcp}?page=2#x`, token)
      assert.strictEqual(first.authorization, `DPoP ${token}`)
      assert.notStrictEqual(jose.decodeJwt(first.dpop).jti, jose.decodeJwt(second.dpop).jti)
      // htm upper-cased, htu without query and fragment (RFC 9449 §4.2).
      assert.strictEqual(jose.decodeJwt(second.dpop).htm, "POST")
      assert.strictEqual(jose.decodeJwt(second.dpop).htu, rs.mcp)
      assert.strictEqual((yield* rs.call({ ...first })).status, 200)
      assert.strictEqual((yield* rs.call({ ...second })).status, 200)

      // The resource server's checks bite: the token as Bearer, a proof for another URL, a reused token in another key's proof.
      assert.strictEqual((yield* rs.call({ authorization: `Bearer ${token}` })).status, 401)
      const elsewhere = yield* key.present("POST", `${rs.mcp}/other`, token)
      assert.strictEqual((yield* rs.call({ ...elsewhere })).status, 401)
      const thief = yield* Dpop.make()
      assert.strictEqual((yield* rs.call({ ...(yield* thief.present("POST", rs.mcp, token)) })).status, 401)
      assert.isFalse(thief.isBound(token))
    })
  )

  it.live("a user's login: the code is bound to the key (dpop_jkt), the token too, and so is its refresh", () =>
    Effect.gen(function* () {
      const redirectUri = "http://127.0.0.1:1/callback"
      const { rs } = yield* setup("nonce", undefined, { id: "mcp-cli", redirectUri })
      const key = yield* Dpop.make()
      const browser = Headless.make(redirectUri)
      const visited: Array<URL> = []
      const userAgent = UserAgent.make(redirectUri, (url) => {
        visited.push(url)
        return browser.userAgent.authorize(url)
      })
      const thumbprint = yield* key.thumbprint
      yield* Effect.gen(function* () {
        const client = yield* OAuthClient.OAuthClient
        const token = yield* client.authorize(rs.mcp, undefined)
        assert.strictEqual(visited[0]?.searchParams.get("dpop_jkt"), thumbprint)
        assert.isTrue(key.isBound(token))
        assert.strictEqual((jose.decodeJwt(token).cnf as { jkt?: string } | undefined)?.jkt, thumbprint)
        assert.strictEqual((yield* rs.call({ ...(yield* key.present("POST", rs.mcp, token)) })).status, 200)
        // A 401 for it: the refresh (a public client's refresh token is bound to the key too) gives a bound token.
        const refreshed = yield* client.authorize(rs.mcp, 'DPoP error="invalid_token"', token)
        assert.notStrictEqual(refreshed, token)
        assert.strictEqual(visited.length, 1)
        assert.isTrue(key.isBound(refreshed))
        assert.strictEqual((yield* rs.call({ ...(yield* key.present("POST", rs.mcp, refreshed)) })).status, 200)
      }).pipe(
        Effect.provide(
          OAuthClient.layer({ allowInsecureRequests: true }).pipe(
            Layer.provide(
              Layer.mergeAll(
                TokenStore.layerMemory,
                ClientRegistration.layer({ preRegistered: { clientId: "mcp-cli" }, allowInsecureRequests: true }),
                Layer.succeed(UserAgent.UserAgent, userAgent),
                Layer.succeed(Dpop.Dpop, key)
              )
            )
          )
        )
      )
    })
  )

  it.live("a token endpoint that demands a nonce gets the request again with it", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup("nonce")
      const key = yield* Dpop.make()
      // Without the retry on use_dpop_nonce, this fails with "the server answered 400 use_dpop_nonce".
      const token = yield* tokenWith(op, key, rs.mcp)
      assert.isTrue(key.isBound(token))
      assert.strictEqual((jose.decodeJwt(token).cnf as { jkt?: string } | undefined)?.jkt, yield* key.thumbprint)
    })
  )

  it.live("a resource server's use_dpop_nonce challenge: the nonce is kept and the next proof carries it", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup(true, "rs-nonce-1")
      const key = yield* Dpop.make()
      const token = yield* tokenWith(op, key, rs.mcp)
      const refused = yield* rs.call({ ...(yield* key.present("POST", rs.mcp, token)) })
      assert.strictEqual(refused.status, 401)
      const header = (name: string) => refused.headers.get(name) ?? undefined
      assert.isTrue(key.retryWithNonce(rs.mcp, refused.status, header))
      const retried = yield* key.present("POST", rs.mcp, token)
      assert.strictEqual(jose.decodeJwt(retried.dpop).nonce, "rs-nonce-1")
      assert.strictEqual((yield* rs.call({ ...retried })).status, 200)
      // A nonce on any other answer is kept, but is no reason to resend.
      assert.isFalse(key.retryWithNonce(rs.mcp, 200, (name) => (name === "dpop-nonce" ? "rs-nonce-2" : undefined)))
      assert.strictEqual(jose.decodeJwt(yield* key.proof("GET", rs.mcp)).nonce, "rs-nonce-2")
      // A 401 that is not the nonce challenge is not retried.
      assert.isFalse(
        key.retryWithNonce(rs.mcp, 401, (name) => (name === "dpop-nonce" ? "n" : 'DPoP error="invalid_token"'))
      )
    })
  )

  it.live("through OAuthHttpClient: 401, a bound token, the resource server's nonce, then the answer", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup(true, "rs-nonce-1")
      const key = yield* Dpop.make()
      const status = yield* Effect.gen(function* () {
        const http = yield* HttpClient.HttpClient
        const first = yield* http.post(rs.mcp)
        const second = yield* http.post(rs.mcp)
        return [first.status, second.status]
      }).pipe(
        Effect.provide(
          OAuthHttpClient.layer({ serverUrl: rs.mcp }).pipe(
            Layer.provide(Layer.mergeAll(FetchHttpClient.layer, machineClient(op, key), Layer.succeed(Dpop.Dpop, key)))
          )
        )
      )
      // Presented as Bearer, or without the nonce, the resource server would still answer 401.
      assert.deepStrictEqual(status, [200, 200])
    })
  )

  it.live("an authorization server without DPoP issues a Bearer token, which is not presented with DPoP", () =>
    Effect.gen(function* () {
      const { op, rs } = yield* setup(false)
      const key = yield* Dpop.make()
      const token = yield* tokenWith(op, key, rs.mcp)
      assert.isFalse(key.isBound(token))
      assert.isUndefined(jose.decodeJwt(token).cnf)
    })
  )
})

/**
 * An authorization server for the JWT bearer grant at `<base>`, which is
 * also the protected resource `<base>/mcp` (its metadata names `<base>`):
 * assertions are verified with `assertionKey` and must name this issuer as
 * audience; `check` may refuse one. Every token request is recorded.
 */
const jwtBearerServer = (
  assertionKey: () => jose.CryptoKey,
  check: (claims: jose.JWTPayload, header: jose.ProtectedHeaderParameters) => string | undefined = () => undefined
) =>
  Effect.gen(function* () {
    const requests: Array<URLSearchParams> = []
    const server = yield* listen((request, response) => {
      const url = new URL(request.url ?? "/", base)
      if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
        return json(response, 200, { resource: mcp, authorization_servers: [base] })
      }
      if (url.pathname === "/.well-known/oauth-authorization-server") {
        return json(response, 200, {
          issuer: base,
          token_endpoint: `${base}/token`,
          grant_types_supported: [JwtBearer.grantType]
        })
      }
      if (url.pathname !== "/token") return json(response, 404, {})
      readForm(request).then(async (form) => {
        requests.push(form)
        if (form.get("grant_type") !== JwtBearer.grantType)
          return json(response, 400, { error: "unsupported_grant_type" })
        try {
          const assertion = form.get("assertion") ?? ""
          const { payload, protectedHeader } = await jose.jwtVerify(assertion, assertionKey(), { audience: base })
          const refusal = check(payload, protectedHeader)
          if (refusal !== undefined) return json(response, 400, { error: refusal })
          json(response, 200, {
            access_token: `at-${payload.sub}-${requests.length}`,
            token_type: "Bearer",
            expires_in: 60
          })
        } catch {
          json(response, 400, { error: "invalid_grant" })
        }
      })
    })
    const base = baseOf(server)
    const mcp = `${base}/mcp`
    return { base, mcp, requests }
  })

/** An OAuth client using the JWT bearer grant with `assertion`, as public client `clientId`. */
const bearerClient = (assertion: JwtBearer.Assertion, credentials: ClientRegistration.ClientCredentials) =>
  OAuthClient.layer({ grant: "jwt_bearer", assertion, allowInsecureRequests: true }).pipe(
    Layer.provide(
      Layer.merge(
        TokenStore.layerMemory,
        ClientRegistration.layer({ preRegistered: credentials, allowInsecureRequests: true })
      )
    )
  )

const authorize = (server: string) =>
  Effect.flatMap(Effect.service(OAuthClient.OAuthClient), (client) => client.authorize(server, undefined))

describe("JWT bearer grant (RFC 7523)", () => {
  it.live("workload identity: the platform's token is the assertion; a refusal is reported once, not retried", () =>
    Effect.gen(function* () {
      const workload = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
      const as = yield* jwtBearerServer(
        () => workload.publicKey,
        (claims) => (claims.sub === "revoked-workload" ? "invalid_grant" : undefined)
      )
      const sign = (sub: string) =>
        Effect.promise(() =>
          new jose.SignJWT({})
            .setProtectedHeader({ alg: "ES256" })
            .setIssuer("https://platform.example")
            .setSubject(sub)
            .setAudience(as.base)
            .setIssuedAt()
            .setExpirationTime("5m")
            .sign(workload.privateKey)
        )
      const good = yield* sign("workload-1")
      const token = yield* authorize(as.mcp).pipe(
        Effect.provide(bearerClient(JwtBearer.fixed(good), { clientId: "workload", authMethod: "none" }))
      )
      assert.strictEqual(token, "at-workload-1-1")
      const sent = as.requests[0]!
      assert.strictEqual(sent.get("assertion"), good)
      assert.strictEqual(sent.get("resource"), as.mcp)
      assert.strictEqual(sent.get("client_id"), "workload")

      const revoked = yield* sign("revoked-workload")
      const error = yield* Effect.flip(
        authorize(as.mcp).pipe(
          Effect.provide(bearerClient(JwtBearer.fixed(revoked), { clientId: "workload", authMethod: "none" }))
        )
      )
      assert.strictEqual(error._tag, "AuthorizationFailed")
      assert.include(error.message, "jwt bearer grant")
      assert.include(error.message, "invalid_grant")
      assert.notInclude(error.message, revoked.split(".")[1]!)
      assert.strictEqual(as.requests.length, 2)
    })
  )

  it.live("enterprise-managed authorization: the ID token becomes an ID-JAG at the IdP, then an access token", () =>
    Effect.gen(function* () {
      const idpKeys = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
      const jagKeys = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
      const exchanges: Array<URLSearchParams> = []
      const idp = yield* listen((request, response) => {
        const url = new URL(request.url ?? "/", idpBase)
        if (url.pathname === "/.well-known/openid-configuration") {
          return json(response, 200, { issuer: idpBase, token_endpoint: `${idpBase}/oauth2/token` })
        }
        if (url.pathname !== "/oauth2/token") return json(response, 404, {})
        readForm(request).then(async (form) => {
          exchanges.push(form)
          try {
            const { payload } = await jose.jwtVerify(form.get("subject_token") ?? "", idpKeys.publicKey, {
              issuer: idpBase,
              audience: "client-at-idp"
            })
            if (payload.sub === "offboarded") return json(response, 400, { error: "access_denied" })
            const jag = await new jose.SignJWT({ resource: form.get("resource"), client_id: "mcp-client" })
              .setProtectedHeader({ alg: "ES256", typ: "oauth-id-jag+jwt" })
              .setIssuer(idpBase)
              .setSubject(payload.sub ?? "")
              .setAudience(form.get("audience") ?? "")
              .setIssuedAt()
              .setExpirationTime("5m")
              .sign(jagKeys.privateKey)
            // A confused IdP that puts a token where the type belongs, for the test of what errors quote.
            const issued = payload.sub === "confused" ? jag : IdentityAssertion.idJagTokenType
            json(response, 200, { access_token: jag, issued_token_type: issued, token_type: "N_A" })
          } catch {
            json(response, 400, { error: "invalid_grant" })
          }
        })
      })
      const idpBase = baseOf(idp)
      let resource = ""
      const as = yield* jwtBearerServer(
        () => jagKeys.publicKey,
        (claims, header) =>
          header.typ === "oauth-id-jag+jwt" && claims.resource === resource ? undefined : "invalid_grant"
      )
      resource = as.mcp
      const idToken = (sub: string) =>
        Effect.promise(() =>
          new jose.SignJWT({ email: `${sub}@example.com` })
            .setProtectedHeader({ alg: "ES256" })
            .setIssuer(idpBase)
            .setSubject(sub)
            .setAudience("client-at-idp")
            .setIssuedAt()
            .setExpirationTime("1h")
            .sign(idpKeys.privateKey)
        )
      const client = (token: string) =>
        bearerClient(
          IdentityAssertion.idJag({
            issuer: idpBase,
            idToken: token,
            client: { clientId: "client-at-idp", authMethod: "none" },
            allowInsecureRequests: true
          }),
          { clientId: "mcp-client", clientSecret: "mcp-client-secret", authMethod: "client_secret_basic" }
        )

      const alice = yield* idToken("alice")
      const token = yield* authorize(as.mcp).pipe(Effect.provide(client(alice)))
      assert.strictEqual(token, "at-alice-1")
      const exchange = exchanges[0]!
      assert.strictEqual(exchange.get("grant_type"), "urn:ietf:params:oauth:grant-type:token-exchange")
      assert.strictEqual(exchange.get("subject_token_type"), IdentityAssertion.idTokenType)
      assert.strictEqual(exchange.get("requested_token_type"), IdentityAssertion.idJagTokenType)
      assert.strictEqual(exchange.get("audience"), as.base)
      assert.strictEqual(exchange.get("resource"), as.mcp)
      assert.strictEqual(as.requests[0]!.get("resource"), as.mcp)

      // The IdP's refusal stops the login at the exchange; the ID token is not quoted.
      const offboarded = yield* idToken("offboarded")
      const error = yield* Effect.flip(authorize(as.mcp).pipe(Effect.provide(client(offboarded))))
      assert.strictEqual(error._tag, "AuthorizationFailed")
      assert.include(error.message, "token exchange")
      assert.include(error.message, "access_denied")
      assert.notInclude(error.message, offboarded.split(".")[1]!)
      // An answer that is not an ID-JAG is refused before the authorization server sees it, without quoting it.
      const confused = yield* Effect.flip(authorize(as.mcp).pipe(Effect.provide(client(yield* idToken("confused")))))
      assert.include(confused.message, "no recognisable issued_token_type")
      assert.notInclude(confused.message, "eyJ")
      assert.strictEqual(as.requests.length, 1)
    })
  )
})
