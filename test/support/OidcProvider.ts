/**
 * A real OpenID provider (`oidc-provider`) for the authorization tests, on
 * 127.0.0.1 at a free port, closed with the test's scope. It issues access
 * tokens with the client credentials grant for three resources (RFC 8707
 * resource indicators): two that get JWT access tokens (`resource`,
 * `otherResource`: two audiences) and one that gets opaque tokens
 * (`opaqueResource`, verified by introspection). `introspector` is the
 * resource server's own client, allowed to introspect. With `tokenExchange`,
 * it also takes RFC 8693 token exchanges from the clients named there.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as jose from "jose"
import Provider, { errors } from "oidc-provider"

/** A running provider. */
export interface OidcProvider {
  /** The issuer identifier (`http://127.0.0.1:<port>`). */
  readonly issuer: string
  /** A resource that gets JWT access tokens. */
  readonly resource: string
  /** Another resource with JWT access tokens: the other audience. */
  readonly otherResource: string
  /** A resource that gets opaque access tokens. */
  readonly opaqueResource: string
  /** The scopes every resource knows. */
  readonly scopes: ReadonlyArray<string>
  /** The resource server's client (introspection). */
  readonly introspector: { readonly id: string; readonly secret: string }
  /** The client allowed the client credentials grant (client_secret_basic or client_secret_post). */
  readonly client: { readonly id: string; readonly secret: string }
  /** An access token from the client credentials grant for `resource` (as `client`, or `as` another client of `extraClients`). */
  readonly token: (
    resource: string,
    scope?: string,
    as?: { readonly id: string; readonly secret: string }
  ) => Effect.Effect<string>
}

const client = { id: "test-client", secret: "test-client-secret-0123456789abcdef" }
const introspector = { id: "resource-server", secret: "resource-server-secret-0123456789ab" }
const scopes = ["notes:read", "notes:write"]
const tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
const accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

/**
 * Additions for the client-side tests (none by default, so the verifier tests
 * see the provider unchanged): a public client for the authorization code
 * grant with dev interactions (login and consent forms), refresh tokens,
 * dynamic registration, extra JWT resources and a shorter token lifetime.
 */
export interface StartOptions {
  /** A public client (`none`, PKCE S256) with this id and redirect URI; turns dev interactions on. */
  readonly publicClient?: { readonly id: string; readonly redirectUri: string } | undefined
  /** Dynamic client registration (RFC 7591), open; turns dev interactions on. */
  readonly registration?: boolean | undefined
  /** More resources that get JWT access tokens (e.g. a test resource server's URL). */
  readonly acceptResource?: ((indicator: string) => boolean) | undefined
  /** A client authenticating with private_key_jwt (client credentials grant) with this id and public key. */
  readonly privateKeyJwtClient?: { readonly id: string; readonly publicJwk: Record<string, unknown> } | undefined
  /** The JWT access tokens' lifetime in seconds; 300 by default. */
  readonly accessTokenTTL?: number | undefined
  /**
   * DPoP (RFC 9449; oidc-provider binds a token to a proof's key when the token request has one):
   * `false` turns it off (proofs are ignored, tokens are Bearer), `"nonce"` makes the token endpoint
   * demand a server nonce (`use_dpop_nonce`); on without nonces by default.
   */
  readonly dpop?: boolean | "nonce" | undefined
  /** More confidential clients allowed the client credentials grant (other principals). */
  readonly extraClients?: ReadonlyArray<{ readonly id: string; readonly secret: string }> | undefined
  /**
   * The audience of a token asked for without `resource` (a client of MCP 2025-03-26, which predates RFC 8707),
   * read when the token is issued; `resource` by default.
   */
  readonly defaultResource?: (() => string) | undefined
  /**
   * The RFC 8693 token exchange grant, for these confidential clients (which get the client credentials grant as
   * well): an access token this provider issued (`subject_token`) is traded for a JWT access token for `resource`
   * with the subject token's `sub`, `client_id` and `scope` (or the requested scope), and `act.sub` the client that
   * asked. Each exchange is offered to `onExchange`.
   */
  readonly tokenExchange?:
    | {
        readonly clients: ReadonlyArray<{ readonly id: string; readonly secret: string }>
        readonly onExchange?: ((exchange: { readonly actor: string; readonly subject: string }) => void) | undefined
      }
    | undefined
}

/** Starts a provider; the scope closes it. */
export const start: Effect.Effect<OidcProvider, never, Scope.Scope> = Effect.suspend(() => startWith({}))

/** Starts a provider with the client-side additions of `options`; the scope closes it. */
export const startWith = (options: StartOptions): Effect.Effect<OidcProvider, never, Scope.Scope> =>
  Effect.gen(function* () {
    let handler: http.RequestListener = (_request, response) => response.writeHead(503).end()
    const server = yield* Effect.acquireRelease(
      Effect.callback<http.Server>((resume) => {
        const s = http.createServer((request, response) => handler(request, response))
        s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
      }),
      (s) =>
        Effect.callback<void>((resume) => {
          s.closeAllConnections()
          s.close(() => resume(Effect.void))
        })
    )
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const resource = "http://mcp.localhost/mcp"
    const otherResource = "http://other.localhost/mcp"
    const opaqueResource = "http://opaque.localhost/mcp"
    const { privateKey, publicKey } = yield* Effect.promise(() => jose.generateKeyPair("RS256", { extractable: true }))
    const jwk = {
      ...(yield* Effect.promise(() => jose.exportJWK(privateKey))),
      kid: "provider-key",
      alg: "RS256",
      use: "sig"
    }
    const interactive = options.publicClient !== undefined || options.registration === true
    const ttl = options.accessTokenTTL ?? 300
    const provider = new Provider(issuer, {
      ...(interactive
        ? {
            // Refresh tokens for every code grant, not only with offline_access (which forces consent again).
            issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed: (grant: string) => boolean }) =>
              client.grantTypeAllowed("refresh_token")
          }
        : {}),
      clients: [
        ...(options.privateKeyJwtClient === undefined
          ? []
          : [
              {
                client_id: options.privateKeyJwtClient.id,
                token_endpoint_auth_method: "private_key_jwt",
                jwks: { keys: [options.privateKeyJwtClient.publicJwk] },
                grant_types: ["client_credentials"],
                redirect_uris: [],
                response_types: [],
                scope: scopes.join(" ")
              }
            ]),
        ...(options.publicClient === undefined
          ? []
          : [
              {
                client_id: options.publicClient.id,
                token_endpoint_auth_method: "none",
                grant_types: ["authorization_code", "refresh_token"],
                redirect_uris: [options.publicClient.redirectUri],
                response_types: ["code"],
                scope: scopes.join(" ")
              }
            ]),
        ...(options.tokenExchange?.clients ?? []).map((exchanging) => ({
          client_id: exchanging.id,
          client_secret: exchanging.secret,
          grant_types: ["client_credentials", tokenExchangeGrant],
          redirect_uris: [],
          response_types: [],
          scope: scopes.join(" ")
        })),
        ...(options.extraClients ?? []).map((extra) => ({
          client_id: extra.id,
          client_secret: extra.secret,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
          scope: scopes.join(" ")
        })),
        {
          client_id: client.id,
          client_secret: client.secret,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
          scope: scopes.join(" ")
        },
        {
          client_id: introspector.id,
          client_secret: introspector.secret,
          grant_types: [],
          redirect_uris: [],
          response_types: []
        }
      ],
      jwks: { keys: [jwk] },
      scopes: ["openid", "offline_access", ...scopes],
      features: {
        dPoP:
          options.dpop === "nonce"
            ? { enabled: true, nonceSecret: Buffer.alloc(32, 7), requireNonce: () => true }
            : { enabled: options.dpop !== false },
        devInteractions: { enabled: interactive },
        registration: { enabled: options.registration === true },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: (_ctx: unknown, _client: unknown, oneOf: string | undefined) =>
            oneOf ?? options.defaultResource?.() ?? resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, indicator: string) => {
            if (indicator === resource || indicator === otherResource || options.acceptResource?.(indicator) === true) {
              return { scope: scopes.join(" "), audience: indicator, accessTokenFormat: "jwt", accessTokenTTL: ttl }
            }
            if (indicator === opaqueResource) {
              return { scope: scopes.join(" "), audience: indicator, accessTokenFormat: "opaque", accessTokenTTL: 300 }
            }
            throw new errors.InvalidTarget()
          }
        }
      }
    })
    const exchange = options.tokenExchange
    if (exchange !== undefined) {
      provider.registerGrantType(
        tokenExchangeGrant,
        async (ctx) => {
          const params = ctx.oidc.params as Record<string, string | undefined>
          const subject = await jose
            .jwtVerify(params.subject_token ?? "", publicKey, { issuer })
            .then((verified) => verified.payload)
            .catch(() => {
              throw new errors.InvalidGrant("subject_token is not an access token of this provider")
            })
          const target = params.resource ?? ""
          if (options.acceptResource?.(target) !== true && target !== resource) throw new errors.InvalidTarget()
          exchange.onExchange?.({ actor: ctx.oidc.client.clientId, subject: String(subject.sub) })
          const now = Math.floor(Date.now() / 1000)
          const token = await new jose.SignJWT({
            client_id: subject.client_id,
            scope: params.scope ?? subject.scope,
            act: { sub: ctx.oidc.client.clientId }
          })
            .setProtectedHeader({ alg: "RS256", kid: jwk.kid, typ: "at+jwt" })
            .setIssuer(issuer)
            .setSubject(String(subject.sub))
            .setAudience(target)
            .setIssuedAt(now)
            .setExpirationTime(now + ttl)
            .setJti(crypto.randomUUID())
            .sign(privateKey)
          ctx.body = { access_token: token, issued_token_type: accessTokenType, token_type: "Bearer", expires_in: ttl }
        },
        ["subject_token", "subject_token_type", "requested_token_type", "resource", "audience", "scope"]
      )
    }
    handler = provider.callback()

    const token = (forResource: string, scope = scopes.join(" "), as = client) =>
      Effect.promise(async () => {
        const response = await fetch(`${issuer}/token`, {
          method: "POST",
          headers: {
            authorization: `Basic ${Buffer.from(`${as.id}:${as.secret}`).toString("base64")}`,
            "content-type": "application/x-www-form-urlencoded"
          },
          body: new URLSearchParams({ grant_type: "client_credentials", resource: forResource, scope }).toString()
        })
        const body = (await response.json()) as { readonly access_token?: string }
        if (!response.ok || body.access_token === undefined) {
          throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`)
        }
        return body.access_token
      })

    return { issuer, resource, otherResource, opaqueResource, scopes, introspector, client, token }
  })
