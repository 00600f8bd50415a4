/**
 * The grants that trade an assertion, on oauth4webapi's generic token
 * endpoint request: the JWT bearer grant (RFC 7523 §2.1) at the MCP server's
 * authorization server, and the token exchange (RFC 8693) that obtains an
 * identity assertion at an enterprise identity provider. No failure quotes
 * the assertion or the tokens.
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import type { ClientCredentials } from "../ClientRegistration.ts"
import { AuthorizationFailed, type RegistrationFailed } from "../OAuthClientError.ts"
import type { Tokens } from "../TokenStore.ts"
import * as Http from "./clientHttp.ts"
import * as Grants from "./grants.ts"

/** `grant_type` of the JWT bearer grant (RFC 7523). */
export const jwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/** `grant_type` of the token exchange (RFC 8693). */
export const tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"

/** The JWT bearer grant: `assertion` for an access token for the context's resource, with `resource` and `scope`. */
export const jwtBearer = (
  context: Grants.Context,
  assertion: string
): Effect.Effect<Tokens, AuthorizationFailed | RegistrationFailed> =>
  Grants.tokenRequest("jwt bearer grant", context, async (client, auth, dpop) =>
    oauth.processGenericTokenEndpointResponse(
      context.server,
      client,
      await oauth.genericTokenEndpointRequest(
        context.server,
        client,
        auth,
        jwtBearerGrantType,
        Grants.withScope({ assertion, resource: context.resource }, context.scope),
        { ...Http.requestOptions(context.http), ...dpop }
      )
    )
  )

/** What a token exchange asks for. */
export interface Exchange {
  /** The token endpoint (its issuer, when known, for the server object oauth4webapi wants). */
  readonly server: oauth.AuthorizationServer
  /** The client at that server. */
  readonly credentials: ClientCredentials
  readonly subjectToken: string
  readonly subjectTokenType: string
  readonly requestedTokenType: string
  /** More parameters (`audience`, `resource`, `scope`). */
  readonly parameters: Readonly<Record<string, string>>
  readonly http: Http.HttpOptions
}

/** A token type URI to quote in an error; anything else the server put there is not repeated. */
const tokenTypeOf = (value: unknown) =>
  typeof value === "string" && /^urn:[\w.:-]{1,120}$/.test(value) ? value : "no recognisable issued_token_type"

/**
 * A token exchange (RFC 8693 §2.1); returns the issued token. The answer's
 * `issued_token_type` must be the one requested; `token_type` is often
 * `N_A` (the token is not an access token), which is accepted.
 */
export const tokenExchange = (exchange: Exchange): Effect.Effect<string, AuthorizationFailed | RegistrationFailed> =>
  Effect.gen(function* () {
    const step = "token exchange"
    const auth = yield* Grants.clientAuth(exchange.server, exchange.credentials)
    const client: oauth.Client = { client_id: exchange.credentials.clientId }
    const answer = yield* Http.attempt(
      async () =>
        oauth.processGenericTokenEndpointResponse(
          exchange.server,
          client,
          await oauth.genericTokenEndpointRequest(
            exchange.server,
            client,
            auth,
            tokenExchangeGrantType,
            {
              ...exchange.parameters,
              subject_token: exchange.subjectToken,
              subject_token_type: exchange.subjectTokenType,
              requested_token_type: exchange.requestedTokenType
            },
            Http.requestOptions(exchange.http)
          ),
          { recognizedTokenTypes: { n_a: () => {} } }
        ),
      (detail) => new AuthorizationFailed({ step, detail })
    )
    if (answer.issued_token_type !== exchange.requestedTokenType) {
      return yield* new AuthorizationFailed({
        step,
        detail: `the identity provider issued ${tokenTypeOf(answer.issued_token_type)} instead of ${exchange.requestedTokenType}`
      })
    }
    return answer.access_token
  })
