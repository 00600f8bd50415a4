/**
 * The grants of the client, on oauth4webapi: authorization code with PKCE
 * S256, `state`, the RFC 9207 `iss` check and the RFC 8707 `resource`;
 * refresh; client credentials. Each returns the tokens to keep; no failure
 * quotes a token, code or secret.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import type { ClientCredentials } from "../ClientRegistration.ts"
import type { DpopShape } from "../Dpop.ts"
import { AuthorizationFailed, RegistrationFailed } from "../OAuthClientError.ts"
import type { Tokens } from "../TokenStore.ts"
import type { UserAgentShape } from "../UserAgent.ts"
import * as Http from "./clientHttp.ts"

/** What every grant needs. */
export interface Context {
  readonly server: oauth.AuthorizationServer
  readonly credentials: ClientCredentials
  /** The RFC 8707 resource indicator. */
  readonly resource: string
  /** Scopes to request; `scope` is omitted when undefined. */
  readonly scope: ReadonlyArray<string> | undefined
  readonly http: Http.HttpOptions
  /** The DPoP key: every token request carries a proof, and the token is bound to the key (RFC 9449). */
  readonly dpop?: DpopShape | undefined
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 asks of the Basic credentials. */
const formEncode = (value: string) => new URLSearchParams([["", value]]).toString().slice(1)

/**
 * `client_secret_basic`. oauth4webapi's own also escapes `-`, `_`, `.`, `!`,
 * `~`, `*`, `'`, `(` and `)`, which form encoding leaves as they are: an
 * authorization server that decodes no more than it must (many take the id
 * as it comes) would not know `my%2Dclient`.
 */
const clientSecretBasic =
  (secret: string): oauth.ClientAuth =>
  (_server, client, _body, headers) => {
    headers.set("authorization", `Basic ${btoa(`${formEncode(client.client_id)}:${formEncode(secret)}`)}`)
  }

/** oauth4webapi's client authentication for the credentials. */
/** How the client authenticates at the token endpoint: as configured, else by whether it has a secret. */
const authMethodOf = (credentials: ClientCredentials) =>
  credentials.authMethod ?? (credentials.clientSecret === undefined ? "none" : "client_secret_basic")

export const clientAuth = (
  server: oauth.AuthorizationServer,
  credentials: ClientCredentials
): Effect.Effect<oauth.ClientAuth, RegistrationFailed> => {
  const secret = credentials.clientSecret
  const method = authMethodOf(credentials)
  const missing = (what: string) =>
    Effect.fail(new RegistrationFailed({ issuer: server.issuer, detail: `${method} needs ${what}` }))
  switch (method) {
    case "none":
      return Effect.succeed(oauth.None())
    case "client_secret_basic":
      return secret === undefined ? missing("a client secret") : Effect.succeed(clientSecretBasic(secret))
    case "client_secret_post":
      return secret === undefined ? missing("a client secret") : Effect.succeed(oauth.ClientSecretPost(secret))
    case "private_key_jwt":
      return credentials.privateKey === undefined
        ? missing("a private key")
        : Effect.succeed(oauth.PrivateKeyJwt(credentials.privateKey))
  }
}

const toTokens = (context: Context, answer: oauth.TokenEndpointResponse, now: number, previous?: Tokens): Tokens => ({
  accessToken: answer.access_token,
  // A refresh answer without a refresh token keeps the one that was used.
  refreshToken: answer.refresh_token ?? previous?.refreshToken,
  expiresAt: typeof answer.expires_in === "number" ? now + answer.expires_in * 1000 : undefined,
  scope: answer.scope === undefined ? context.scope : answer.scope.split(" ").filter((s) => s.length > 0),
  tokenType: answer.token_type,
  issuer: context.server.issuer,
  clientId: authMethodOf(context.credentials) === "none" ? context.credentials.clientId : undefined
})

/**
 * One request to the token endpoint: `run` makes it with the client, its
 * authentication and the DPoP options (the proof, when the context has a key).
 * A `use_dpop_nonce` answer is retried once: the handle has kept the nonce.
 */
export const tokenRequest = (
  step: string,
  context: Context,
  run: (
    client: oauth.Client,
    auth: oauth.ClientAuth,
    dpop: oauth.DPoPRequestOptions
  ) => Promise<oauth.TokenEndpointResponse>,
  previous?: Tokens
): Effect.Effect<Tokens, AuthorizationFailed | RegistrationFailed> =>
  Effect.gen(function* () {
    const auth = yield* clientAuth(context.server, context.credentials)
    const client: oauth.Client = { client_id: context.credentials.clientId }
    const dpop = context.dpop
    const options: oauth.DPoPRequestOptions = dpop === undefined ? {} : { DPoP: dpop.handle }
    const answer = yield* Http.attempt(
      () =>
        run(client, auth, options).catch((error) =>
          oauth.isDPoPNonceError(error) ? run(client, auth, options) : Promise.reject(error)
        ),
      (detail, refused) => new AuthorizationFailed({ step, detail, refused })
    )
    // A DPoP client takes a Bearer token from a server that does not do DPoP (RFC 9449 §5), and presents it as such.
    if (answer.token_type === "dpop" && dpop !== undefined) {
      dpop.markBound(answer.access_token)
    } else if (answer.token_type !== "bearer") {
      return yield* new AuthorizationFailed({ step, detail: `unsupported token type ${answer.token_type}` })
    }
    return toTokens(context, answer, yield* Clock.currentTimeMillis, previous)
  })

/** `params` with `scope` when there are scopes to ask for. */
export const withScope = (params: Record<string, string>, scope: ReadonlyArray<string> | undefined) =>
  scope === undefined || scope.length === 0 ? params : { ...params, scope: scope.join(" ") }

/**
 * The authorization code grant with PKCE S256: the user agent visits the
 * authorization URL; the redirect's `state` and `iss` (RFC 9207, required
 * when the server advertises it) are checked before the code is exchanged.
 * A server that does not advertise S256 is refused (MCP requires PKCE).
 */
export const authorizationCode = (
  context: Context,
  userAgent: UserAgentShape
): Effect.Effect<Tokens, AuthorizationFailed | RegistrationFailed> =>
  Effect.gen(function* () {
    const { server } = context
    if (server.authorization_endpoint === undefined) {
      return yield* new AuthorizationFailed({ step: "authorization request", detail: "no authorization_endpoint" })
    }
    if (!(server.code_challenge_methods_supported ?? []).includes("S256")) {
      return yield* new AuthorizationFailed({
        step: "authorization request",
        detail: "the authorization server does not advertise PKCE S256"
      })
    }
    const verifier = oauth.generateRandomCodeVerifier()
    const challenge = yield* Effect.promise(() => oauth.calculatePKCECodeChallenge(verifier))
    const state = oauth.generateRandomState()
    const url = new URL(server.authorization_endpoint)
    const params = withScope(
      {
        response_type: "code",
        client_id: context.credentials.clientId,
        redirect_uri: userAgent.redirectUri,
        code_challenge: challenge,
        code_challenge_method: "S256",
        state,
        resource: context.resource,
        // The code is bound to the DPoP key too (RFC 9449 §10): a stolen code is useless without it.
        ...(context.dpop === undefined ? {} : { dpop_jkt: yield* context.dpop.thumbprint })
      },
      context.scope
    )
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
    const redirect = yield* userAgent.authorize(url)
    const client: oauth.Client = { client_id: context.credentials.clientId }
    const callback = yield* Effect.try({
      try: () => oauth.validateAuthResponse(server, client, redirect, state),
      catch: (error) => new AuthorizationFailed({ step: "redirect", detail: Http.describe(error) })
    })
    return yield* tokenRequest("authorization code grant", context, async (client, auth, dpop) =>
      oauth.processAuthorizationCodeResponse(
        server,
        client,
        await oauth.authorizationCodeGrantRequest(server, client, auth, callback, userAgent.redirectUri, verifier, {
          ...Http.requestOptions(context.http),
          ...dpop,
          additionalParameters: { resource: context.resource }
        })
      )
    )
  })

/** A refresh (the `resource` sent again, RFC 8707 §2.2); the old refresh token is kept when no new one comes. */
export const refresh = (
  context: Context,
  tokens: Tokens
): Effect.Effect<Tokens, AuthorizationFailed | RegistrationFailed> => {
  const refreshToken = tokens.refreshToken
  if (refreshToken === undefined) {
    return Effect.fail(new AuthorizationFailed({ step: "refresh", detail: "no refresh token" }))
  }
  // A refresh token works for the client it was issued to: a public one is that client by its id alone.
  const stored = tokens.clientId
  if (stored !== undefined && stored !== context.credentials.clientId) {
    context = { ...context, credentials: { clientId: stored, authMethod: "none" } }
  }
  return tokenRequest(
    "refresh",
    context,
    async (client, auth, dpop) =>
      oauth.processRefreshTokenResponse(
        context.server,
        client,
        await oauth.refreshTokenGrantRequest(context.server, client, auth, refreshToken, {
          ...Http.requestOptions(context.http),
          ...dpop,
          additionalParameters: { resource: context.resource }
        })
      ),
    tokens
  )
}

/** The client credentials grant (SEP-1046): a machine client's own token, with `resource` and `scope`. */
export const clientCredentials = (context: Context): Effect.Effect<Tokens, AuthorizationFailed | RegistrationFailed> =>
  tokenRequest("client credentials grant", context, async (client, auth, dpop) =>
    oauth.processClientCredentialsResponse(
      context.server,
      client,
      await oauth.clientCredentialsGrantRequest(
        context.server,
        client,
        auth,
        withScope({ resource: context.resource }, context.scope),
        { ...Http.requestOptions(context.http), ...dpop }
      )
    )
  )
