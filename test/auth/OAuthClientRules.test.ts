/**
 * What the MCP authorization rules ask of the client beyond a plain login,
 * each against a scripted authorization server (node:http on 127.0.0.1) that
 * records what it was sent: dynamic registration (SEP-837 `application_type`,
 * an auth method the server takes, answers without
 * `client_secret_expires_at`), `client_secret_basic` encoding (RFC 6749
 * §2.3.1), scopes on a step-up (SEP-2350) and `offline_access` (SEP-2207),
 * no refresh token sent to another authorization server (SEP-2352), and the
 * issuer of a 2025-03-26 server's metadata.
 */
import type * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as Discovery from "@effect-mcp/auth/Discovery"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as ProtectedResourceMetadata from "@effect-mcp/auth/ProtectedResourceMetadata"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { listen } from "../support/Listen.ts"

const redirectUri = "http://127.0.0.1:9/callback"

interface Recorded {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly form: URLSearchParams
  readonly json: Record<string, unknown> | undefined
  readonly authorization: string | undefined
}

/**
 * An authorization server at `<origin><prefix>` (metadata at the RFC 8414
 * path-inserted URL) whose answers are `answer`'s, or the defaults: its
 * metadata with `metadata` merged in, a registration, a code redirect with
 * `iss`, tokens with a refresh token. The MCP server's protected resource
 * metadata names `servers()[0]`.
 */
const mockServers = (options: {
  readonly metadata?: (issuer: string) => Record<string, unknown>
  readonly registration?: Record<string, unknown>
  /** Each registration gets a client id of its own (`client-of-<prefix>-<n>`). */
  readonly freshClientIds?: boolean
  /** A refresh's answer instead of tokens: its status and OAuth error. */
  readonly refresh?: () => { readonly status: number; readonly error: string } | undefined
}) =>
  Effect.gen(function* () {
    const seen: Array<Recorded> = []
    let issuers: ReadonlyArray<string> = []
    let tokens = 0
    let registrations = 0
    const handler: http.RequestListener = (request, response) => {
      let body = ""
      request.on("data", (chunk: Buffer) => (body += chunk))
      request.on("end", () => {
        const url = new URL(request.url ?? "/", origin)
        const json = (status: number, value: unknown) =>
          response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
        const isJson = request.headers["content-type"]?.includes("json") === true
        seen.push({
          method: request.method ?? "",
          path: url.pathname,
          query: url.searchParams,
          form: new URLSearchParams(isJson ? "" : body),
          json: isJson ? (JSON.parse(body) as Record<string, unknown>) : undefined,
          authorization: request.headers.authorization
        })
        if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
          return json(200, { resource: `${origin}/mcp`, authorization_servers: issuers })
        }
        for (const issuer of issuers) {
          const prefix = new URL(issuer).pathname.replace(/\/$/, "")
          if (url.pathname === `/.well-known/oauth-authorization-server${prefix}`) {
            return json(200, {
              issuer,
              authorization_endpoint: `${issuer}/authorize`,
              token_endpoint: `${issuer}/token`,
              registration_endpoint: `${issuer}/register`,
              code_challenge_methods_supported: ["S256"],
              response_types_supported: ["code"],
              ...options.metadata?.(issuer)
            })
          }
          if (url.pathname === `${prefix}/register`) {
            registrations++
            const suffix = options.freshClientIds === true ? `-${registrations}` : ""
            return json(201, { client_id: `client-of-${prefix || "root"}${suffix}`, ...options.registration })
          }
          if (url.pathname === `${prefix}/token`) {
            const refused =
              new URLSearchParams(body).get("grant_type") === "refresh_token" ? options.refresh?.() : undefined
            if (refused !== undefined) return json(refused.status, { error: refused.error })
            tokens++
            return json(200, {
              access_token: `access-${tokens}`,
              refresh_token: `refresh-${tokens}`,
              token_type: "Bearer",
              expires_in: 3600
            })
          }
        }
        json(404, {})
      })
    }
    const server = yield* listen(handler)
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return {
      origin,
      mcp: `${origin}/mcp`,
      seen,
      setIssuers: (paths: ReadonlyArray<string>) => {
        issuers = paths.map((p) => `${origin}${p}`)
      }
    }
  })

/** Approves at once: the redirect carries a code, the request's state and the issuer (RFC 9207). */
const approving = (issuerOf: (authorizationUrl: URL) => string, scopes: Array<string | null>) =>
  UserAgent.layer(redirectUri, (authorizationUrl) =>
    Effect.sync(() => {
      scopes.push(authorizationUrl.searchParams.get("scope"))
      const redirect = new URL(redirectUri)
      redirect.searchParams.set("code", "the-code")
      redirect.searchParams.set("state", authorizationUrl.searchParams.get("state") ?? "")
      redirect.searchParams.set("iss", issuerOf(authorizationUrl))
      return redirect
    })
  )

const issuerOfEndpoint = (authorizationUrl: URL) => authorizationUrl.href.replace(/\/authorize\?.*$/, "")

const oauthClient = (registration: ClientRegistration.Options = {}, scopes: Array<string | null> = []) =>
  OAuthClient.layer({ allowInsecureRequests: true }).pipe(
    Layer.provide([
      TokenStore.layerMemory,
      ClientRegistration.layer({ allowInsecureRequests: true, ...registration }),
      approving(issuerOfEndpoint, scopes)
    ])
  )

/** The services `OAuthClient.make` needs, so that a test can make two clients over one store (a restart). */
const oauthParts = () =>
  Layer.mergeAll(
    TokenStore.layerMemory,
    ClientRegistration.layer({ allowInsecureRequests: true }),
    approving(issuerOfEndpoint, [])
  )

/**
 * Authorizes a client at `mock` with the store in context, then makes the
 * stored token expired: what a restart finds. The stored tokens as they were
 * issued, and their key.
 */
const authorizedThenExpired = (mock: { readonly mcp: string; readonly origin: string }) =>
  Effect.gen(function* () {
    const store = yield* TokenStore.TokenStore
    yield* (yield* OAuthClient.make({ allowInsecureRequests: true })).authorize(
      mock.mcp,
      challenge(mock.origin, "notes")
    )
    const key = ProtectedResourceMetadata.canonicalResource(mock.mcp)
    const stored = (yield* store.get(key))!
    yield* store.set(key, { ...stored, expiresAt: 0 })
    return { key, stored }
  })

const challenge = (origin: string, scope: string, error?: string) =>
  `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="${scope}"${
    error === undefined ? "" : `, error="${error}"`
  }`

describe("OAuthClient and the MCP authorization rules", () => {
  it.live(
    "dynamic registration: application_type native, an auth method the server takes, an answer without client_secret_expires_at",
    () =>
      Effect.gen(function* () {
        const mock = yield* mockServers({
          metadata: () => ({ token_endpoint_auth_methods_supported: ["client_secret_post"] }),
          registration: { client_secret: "s3cret", token_endpoint_auth_method: "client_secret_post" }
        })
        mock.setIssuers([""])
        const oauth = yield* OAuthClient.OAuthClient
        assert.strictEqual(yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes")), "access-1")
        const registered = mock.seen.find((r) => r.path === "/register")?.json
        assert.strictEqual(registered?.application_type, "native")
        assert.strictEqual(registered?.token_endpoint_auth_method, "client_secret_post")
        assert.deepStrictEqual(registered?.redirect_uris, [redirectUri])
        const token = mock.seen.find((r) => r.path === "/token")
        assert.strictEqual(token?.form.get("client_secret"), "s3cret")
        assert.strictEqual(token?.authorization, undefined)
      }).pipe(Effect.provide(oauthClient()), Effect.scoped)
  )

  it.live("client_secret_basic form-encodes the id and secret, leaving '-', '.', '_' and '*' as they are", () =>
    Effect.gen(function* () {
      const mock = yield* mockServers({})
      mock.setIssuers([""])
      const oauth = yield* OAuthClient.OAuthClient
      yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes"))
      const basic = mock.seen.find((r) => r.path === "/token")?.authorization
      assert.strictEqual(basic, `Basic ${btoa("pre-registered_client.v2*:a%3Ab+c")}`)
    }).pipe(
      Effect.provide(oauthClient({ preRegistered: { clientId: "pre-registered_client.v2*", clientSecret: "a:b c" } })),
      Effect.scoped
    )
  )

  it.live(
    "a step-up asks for the challenge's scopes and those granted before; offline_access when the server lists it",
    () => {
      const scopes: Array<string | null> = []
      return Effect.gen(function* () {
        const mock = yield* mockServers({ metadata: () => ({ scopes_supported: ["notes:read", "offline_access"] }) })
        mock.setIssuers([""])
        const oauth = yield* OAuthClient.OAuthClient
        const first = yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes:read"))
        yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes:write", "insufficient_scope"), first)
        // Two logins (a refresh never adds scopes), each with its scopes in the authorization request.
        assert.deepStrictEqual(
          scopes.map((scope) => scope?.split(" ").sort()),
          [
            ["notes:read", "offline_access"],
            ["notes:read", "notes:write", "offline_access"]
          ]
        )
        const grantTypes = mock.seen.find((r) => r.path === "/register")?.json?.grant_types
        assert.deepStrictEqual(grantTypes, ["authorization_code", "refresh_token"])
      }).pipe(Effect.provide(oauthClient({}, scopes)), Effect.scoped)
    }
  )

  it.live("no offline_access for a server that does not list it", () => {
    const scopes: Array<string | null> = []
    return Effect.gen(function* () {
      const mock = yield* mockServers({ metadata: () => ({ scopes_supported: ["notes:read"] }) })
      mock.setIssuers([""])
      const oauth = yield* OAuthClient.OAuthClient
      yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes:read"))
      assert.deepStrictEqual(scopes, ["notes:read"])
    }).pipe(Effect.provide(oauthClient({}, scopes)), Effect.scoped)
  })

  it.live("after a migration the new authorization server gets a registration and a login, no old refresh token", () =>
    Effect.gen(function* () {
      const mock = yield* mockServers({})
      mock.setIssuers(["/as1"])
      const oauth = yield* OAuthClient.OAuthClient
      const first = yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes"))
      mock.setIssuers(["/as2"])
      yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes"), first)
      const atAs2 = mock.seen.filter((r) => r.path.startsWith("/as2/"))
      assert.deepStrictEqual(
        atAs2.map((r) => r.path),
        ["/as2/register", "/as2/token"]
      )
      assert.strictEqual(atAs2[1]?.form.get("grant_type"), "authorization_code")
      assert.strictEqual(atAs2[1]?.form.get("client_id"), "client-of-/as2")
      assert.isFalse(mock.seen.some((r) => r.form.get("grant_type") === "refresh_token"))
    }).pipe(Effect.provide(oauthClient()), Effect.scoped)
  )

  it.live("after a restart, an expired token is not refreshed at an authorization server that did not issue it", () =>
    Effect.gen(function* () {
      const mock = yield* mockServers({})
      mock.setIssuers(["/as1"])
      const store = yield* TokenStore.TokenStore
      const { key, stored } = yield* authorizedThenExpired(mock)
      assert.strictEqual(stored.issuer, `${mock.origin}/as1`)
      // The resource now names another authorization server; a new client (a restart) over the same store.
      mock.setIssuers(["/as2"])
      const restarted = yield* OAuthClient.make({ allowInsecureRequests: true })
      assert.isTrue(Option.isNone(yield* restarted.accessToken(mock.mcp)))
      assert.isFalse(mock.seen.some((r) => r.form.get("grant_type") === "refresh_token"))
      assert.isFalse(mock.seen.some((r) => r.path === "/as2/token"))
      assert.isUndefined(yield* store.get(key))
    }).pipe(Effect.provide(oauthParts()), Effect.scoped)
  )

  it.live(
    "after a restart that registered afresh, a public client refreshes as the client its tokens were issued to",
    () =>
      Effect.gen(function* () {
        const mock = yield* mockServers({ freshClientIds: true })
        mock.setIssuers(["/as1"])
        const store = yield* TokenStore.TokenStore
        const { key, stored } = yield* authorizedThenExpired(mock)
        assert.strictEqual(stored.clientId, "client-of-/as1-1")
        const restarted = yield* OAuthClient.make({ allowInsecureRequests: true })
        assert.deepStrictEqual(yield* restarted.accessToken(mock.mcp), Option.some("access-2"))
        const refresh = mock.seen.find((r) => r.form.get("grant_type") === "refresh_token")
        // The restart registered again (client-of-/as1-2): the refresh token is the first registration's.
        assert.strictEqual(refresh?.form.get("client_id"), "client-of-/as1-1")
        assert.strictEqual((yield* store.get(key))?.clientId, "client-of-/as1-1")
      }).pipe(Effect.provide(oauthParts()), Effect.scoped)
  )

  it.live("a refresh the authorization server could not take keeps the tokens; a refused one forgets them", () =>
    Effect.gen(function* () {
      let answer: { readonly status: number; readonly error: string } | undefined = {
        status: 503,
        error: "temporarily_unavailable"
      }
      const mock = yield* mockServers({ refresh: () => answer })
      mock.setIssuers(["/as1"])
      const store = yield* TokenStore.TokenStore
      const oauth = yield* OAuthClient.make({ allowInsecureRequests: true })
      yield* oauth.authorize(mock.mcp, challenge(mock.origin, "notes"))
      const key = ProtectedResourceMetadata.canonicalResource(mock.mcp)
      yield* store.set(key, { ...(yield* store.get(key))!, expiresAt: 0 })
      assert.isTrue(Option.isNone(yield* oauth.accessToken(mock.mcp)))
      assert.isDefined(yield* store.get(key), "kept after a 503")
      answer = undefined
      assert.deepStrictEqual(yield* oauth.accessToken(mock.mcp), Option.some("access-2"))
      yield* store.set(key, { ...(yield* store.get(key))!, expiresAt: 0 })
      answer = { status: 400, error: "invalid_grant" }
      assert.isTrue(Option.isNone(yield* oauth.accessToken(mock.mcp)))
      assert.isUndefined(yield* store.get(key), "forgotten after invalid_grant")
    }).pipe(Effect.provide(oauthParts()), Effect.scoped)
  )

  it.live("a 2025-03-26 server's metadata may name an issuer under a path of its origin, not another origin", () =>
    Effect.gen(function* () {
      const mock = yield* mockServers({})
      // No protected resource metadata: the server's origin serves the authorization server's metadata.
      const metadata = (issuer: string) =>
        Effect.gen(function* () {
          const server = yield* listen((request, response) => {
            if (request.url !== "/.well-known/oauth-authorization-server") return response.writeHead(404).end()
            response.writeHead(200, { "content-type": "application/json" }).end(
              JSON.stringify({
                issuer: issuer.replace("ORIGIN", origin),
                authorization_endpoint: `${origin}/oauth/authorize`,
                token_endpoint: `${origin}/oauth/token`,
                code_challenge_methods_supported: ["S256"],
                response_types_supported: ["code"]
              })
            )
          })
          const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
          return yield* Discovery.discover(`${origin}/mcp`, undefined, { allowInsecureRequests: true }).pipe(
            Effect.map((found) => ({ origin, found }))
          )
        })
      const own = yield* metadata("ORIGIN/oauth")
      assert.strictEqual(own.found.authorizationServer.issuer, `${own.origin}/oauth`)
      assert.strictEqual(own.found.authorizationServer.token_endpoint, `${own.origin}/oauth/token`)
      // An issuer elsewhere is not followed: the default endpoints at the server's origin are used instead.
      const foreign = yield* metadata(`${mock.origin}/as`)
      assert.strictEqual(foreign.found.authorizationServer.issuer, foreign.origin)
      assert.strictEqual(foreign.found.authorizationServer.token_endpoint, `${foreign.origin}/token`)
    }).pipe(Effect.scoped)
  )
})
