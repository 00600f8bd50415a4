/**
 * Enterprise-managed authorization (the MCP extension, also called cross-app
 * access): the user signed in once at the enterprise identity provider (IdP),
 * and the client trades that sign-in's ID token at the IdP for an Identity
 * Assertion JWT Authorization Grant (ID-JAG) naming the MCP server's
 * authorization server and resource (RFC 8693 token exchange), then presents
 * the ID-JAG there with the JWT bearer grant ({@link JwtBearer}). The IdP's
 * policy decides who may use which MCP server; no consent screen per server.
 *
 * ```ts
 * OAuthClient.layer({
 *   grant: "jwt_bearer",
 *   assertion: IdentityAssertion.idJag({ issuer: idp, idToken, client: { clientId: "my-app-at-idp" } })
 * })
 * ```
 * with the client's credentials at the MCP server's authorization server
 * pre-registered (`ClientRegistration.layer({ preRegistered })`).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as oauth from "oauth4webapi"
import type { ClientCredentials } from "./ClientRegistration.ts"
import { tokenExchange } from "./internal/assertionGrants.ts"
import * as Http from "./internal/clientHttp.ts"
import { discover } from "./internal/issuer.ts"
import type * as JwtBearer from "./JwtBearer.ts"
import { DiscoveryFailed, type OAuthClientError } from "./OAuthClientError.ts"

/** The token type of an ID-JAG. */
export const idJagTokenType = "urn:ietf:params:oauth:token-type:id-jag"

/** The token type of an OpenID Connect ID token. */
export const idTokenType = "urn:ietf:params:oauth:token-type:id_token"

/** The identity provider and the sign-in to trade. */
export interface Options {
  /** The IdP's issuer identifier. */
  readonly issuer: string
  /** The IdP's token endpoint; discovered from the issuer's metadata when absent. */
  readonly tokenEndpoint?: string | undefined
  /** The ID token of the user's sign-in at the IdP (an effect when it must be fetched or renewed). */
  readonly idToken: string | Effect.Effect<string, OAuthClientError>
  /** The client's credentials at the IdP (not at the MCP server's authorization server). */
  readonly client: ClientCredentials
  /** How long each request may take; 10 seconds by default. */
  readonly timeout?: Duration.Input | undefined
  /** Allows `http:` URLs (loopback servers in tests). */
  readonly allowInsecureRequests?: boolean | undefined
  /** The most bytes of the IdP's metadata or a token exchange answer read; 1 MiB by default. */
  readonly maxResponseBytes?: number | undefined
}

/**
 * The ID-JAG source of a JWT bearer client: for each token request, a token
 * exchange at the IdP with the ID token as subject, the authorization
 * server's issuer as `audience` and the MCP server as `resource` (and the
 * scopes, when the request has some).
 */
export const idJag = (options: Options): JwtBearer.Assertion => {
  const http: Http.HttpOptions = {
    allowInsecureRequests: options.allowInsecureRequests,
    timeoutMs: Duration.toMillis(options.timeout ?? Duration.seconds(10)),
    maxResponseBytes: options.maxResponseBytes
  }
  const idToken = typeof options.idToken === "string" ? Effect.succeed(options.idToken) : options.idToken
  const given = options.tokenEndpoint
  const idp: Effect.Effect<oauth.AuthorizationServer, DiscoveryFailed> =
    given !== undefined
      ? Effect.succeed({ issuer: options.issuer, token_endpoint: given })
      : Http.attempt(
          () => discover(options.issuer, http),
          (detail) => new DiscoveryFailed({ step: "identity provider metadata", url: options.issuer, detail })
        )
  return (request) =>
    Effect.gen(function* () {
      const server = yield* idp
      return yield* tokenExchange({
        server,
        credentials: options.client,
        subjectToken: yield* idToken,
        subjectTokenType: idTokenType,
        requestedTokenType: idJagTokenType,
        parameters: {
          audience: request.issuer,
          resource: request.resource,
          ...(request.scope === undefined || request.scope.length === 0 ? {} : { scope: request.scope.join(" ") })
        },
        http
      })
    })
}
