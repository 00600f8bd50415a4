/**
 * HttpProtection without a network: the hook's answers for each refusal,
 * the principal's owner key, the 403's scopes, the metadata routes, and
 * Principal.current reading what the hook verified. The verifier is a
 * function of the token (`alice.read` verifies as alice with `notes:read`).
 */
import { assert, describe, it } from "@effect/vitest"
import { InvalidToken, VerifierUnavailable } from "@effect-mcp/auth/AuthError"
import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
import * as Principal from "@effect-mcp/auth/Principal"
import * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"

const principalOf = (subject: string, scopes: ReadonlyArray<string>, clientId = "app"): Principal.PrincipalShape => ({
  subject,
  clientId,
  issuer: "https://auth.example.com",
  scopes,
  audience: ["https://mcp.example.com/mcp"],
  expiresAt: undefined,
  claims: {}
})

const verifier = TokenVerifier.make((token) => {
  if (token === "down") return Effect.fail(new VerifierUnavailable({ step: "key set", detail: "unreachable" }))
  const [subject, scope] = token.split(".")
  if (subject !== "alice" && subject !== "bob") return Effect.fail(new InvalidToken({ reason: "BadSignature" }))
  return Effect.succeed(principalOf(subject, scope === undefined ? [] : [`notes:${scope}`]))
})

const protection = HttpProtection.make({
  resource: "https://mcp.example.com/mcp",
  authorizationServers: ["https://auth.example.com"],
  scopesSupported: ["notes:read", "notes:write"],
  verifier
})

const requestWith = (url: string, authorization?: string) =>
  HttpServerRequest.fromClientRequest(
    HttpClientRequest.post(url).pipe(HttpClientRequest.setHeaders(authorization === undefined ? {} : { authorization }))
  )

const refusalOf = (url: string, authorization?: string) =>
  Effect.flip(protection.authentication.authenticate(requestWith(url, authorization)))

const metadataUrl = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

describe("HttpProtection", () => {
  it.effect("answers each refusal with its status and challenge", () =>
    Effect.gen(function* () {
      const endpoint = "https://mcp.example.com/mcp"
      const missing = yield* refusalOf(endpoint)
      assert.strictEqual(missing.status, 401)
      assert.strictEqual(
        missing.headers["www-authenticate"],
        `Bearer resource_metadata="${metadataUrl}", scope="notes:read notes:write"`
      )
      const invalid = yield* refusalOf(endpoint, "Bearer mallory")
      assert.strictEqual(invalid.status, 401)
      assert.include(invalid.headers["www-authenticate"], 'error="invalid_token"')
      const inQuery = yield* refusalOf(`${endpoint}?access_token=alice`, "Bearer alice")
      assert.strictEqual(inQuery.status, 400)
      assert.include(inQuery.headers["www-authenticate"], 'error="invalid_request"')
      const down = yield* refusalOf(endpoint, "Bearer down")
      assert.strictEqual(down.status, 503)
      assert.isUndefined(down.headers["www-authenticate"])
    })
  )

  it.effect("a verified token is its principal, owned by issuer, subject and client", () =>
    Effect.gen(function* () {
      const authenticated = yield* protection.authentication.authenticate(
        requestWith("https://mcp.example.com/mcp", "Bearer alice.read")
      )
      assert.deepStrictEqual(authenticated.scopes, ["notes:read"])
      assert.strictEqual(authenticated.owner, HttpProtection.ownerOf(principalOf("alice", [])))
      // Another client of the same user is another owner; more scopes are the same one.
      assert.notStrictEqual(authenticated.owner, HttpProtection.ownerOf(principalOf("alice", [], "other")))
      assert.strictEqual(authenticated.owner, HttpProtection.ownerOf(principalOf("alice", ["x", "y"])))
      const forbidden = protection.authentication.insufficientScope(authenticated, ["notes:write"])
      assert.strictEqual(forbidden.status, 403)
      assert.include(forbidden.headers["www-authenticate"], 'scope="notes:write notes:read"')
      assert.include(forbidden.headers["www-authenticate"], 'error="insufficient_scope"')
      assert.include(forbidden.headers["www-authenticate"], `resource_metadata="${metadataUrl}"`)
    })
  )

  it.effect("Principal.current is the principal the hook verified, for the request being served", () =>
    Effect.gen(function* () {
      assert.isTrue(Option.isNone(yield* Principal.currentOption))
      assert.strictEqual((yield* Effect.flip(Principal.current))._tag, "MissingToken")
      const authenticated = yield* protection.authentication.authenticate(
        requestWith("https://mcp.example.com/mcp", "Bearer bob.read")
      )
      // The request being served, as the Peer gives it to a handler: its transport authenticated the caller.
      const request: CurrentRequest.CurrentRequestShape = {
        id: 1,
        method: "tools/call",
        progressToken: undefined,
        progress: () => Effect.void,
        notify: () => Effect.void,
        principal: authenticated,
        sessionId: "s"
      }
      const provide = Effect.provideService(CurrentRequest.CurrentRequest, request)
      const caller = yield* provide(Principal.current)
      assert.strictEqual(caller.subject, "bob")
      const refused = yield* Effect.flip(provide(Principal.requireCurrentScopes("notes:read", "notes:write")))
      assert.strictEqual(refused._tag, "InsufficientScope")
    })
  )

  it.effect("serves the metadata document on the path-suffixed and root well-known paths", () =>
    Effect.gen(function* () {
      const app = yield* HttpRouter.toHttpEffect(protection.routes)
      for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
        const response = yield* app.pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            HttpServerRequest.fromClientRequest(HttpClientRequest.get(`https://mcp.example.com${path}`))
          )
        )
        assert.strictEqual(response.status, 200)
        const body = HttpServerResponse.toWeb(response)
        const document = (yield* Effect.promise(() => body.json())) as Record<string, unknown>
        assert.strictEqual(document.resource, "https://mcp.example.com/mcp")
        assert.deepStrictEqual(document.authorization_servers, ["https://auth.example.com"])
      }
    }).pipe(Effect.scoped)
  )

  it.effect("serves nothing of the 2025-03-26 shape unless asked (no metadata mirror, no default endpoints)", () =>
    Effect.gen(function* () {
      const app = yield* HttpRouter.toHttpEffect(protection.routes)
      const paths = [
        HttpProtection.authorizationServerMetadataPath,
        ...HttpProtection.defaultEndpoints.map((endpoint) => endpoint.path)
      ]
      assert.deepStrictEqual(paths.slice(1), ["/authorize", "/token", "/register"])
      for (const path of paths) {
        const refused = yield* app.pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            HttpServerRequest.fromClientRequest(HttpClientRequest.post(`https://mcp.example.com${path}`))
          ),
          Effect.flip
        )
        assert.strictEqual((refused as { reason?: { _tag?: string } }).reason?._tag, "RouteNotFound", path)
      }
    }).pipe(Effect.scoped)
  )
})
