/**
 * The OAuth client of an MCP client, independent of the transport: the HTTP
 * client asks it for a token before a request ({@link OAuthClientShape.accessToken}:
 * the stored one, refreshed when it has expired) and hands it the
 * `WWW-Authenticate` of a 401 or 403 ({@link OAuthClientShape.authorize}:
 * discovery, registration, then the authorization code grant through the
 * {@link UserAgent}, or the client credentials grant for a machine client).
 * Tokens are kept in the {@link TokenStore}; logins and refreshes are one at
 * a time, so concurrent 401s cost one login.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Semaphore from "effect/Semaphore"
import * as Challenge from "./Challenge.ts"
import { ClientRegistration } from "./ClientRegistration.ts"
import * as Discovery from "./Discovery.ts"
import * as Grants from "./internal/grants.ts"
import { AuthorizationFailed, DiscoveryFailed, type OAuthClientError } from "./OAuthClientError.ts"
import * as ProtectedResourceMetadata from "./ProtectedResourceMetadata.ts"
import { TokenStore, type Tokens } from "./TokenStore.ts"
import { checkRedirectUri, UserAgent } from "./UserAgent.ts"
import { Dpop } from "./Dpop.ts"
import { jwtBearer, jwtBearerGrantType } from "./internal/assertionGrants.ts"
import type * as JwtBearer from "./JwtBearer.ts"

/** How an {@link OAuthClient} obtains tokens. */
export interface Options extends Discovery.Options {
  /**
   * `authorization_code` (a user logs in through the {@link UserAgent}; the
   * default), `client_credentials` (a machine client's own token, SEP-1046) or
   * `jwt_bearer` (RFC 7523: the {@link Options.assertion}'s assertion, for
   * workload identity and enterprise-managed authorization).
   */
  readonly grant?: "authorization_code" | "client_credentials" | "jwt_bearer" | undefined
  /** Where the `jwt_bearer` grant's assertion comes from (e.g. `IdentityAssertion.idJag`, `JwtBearer.fixed`). */
  readonly assertion?: JwtBearer.Assertion | undefined
  /** Scopes to ask for instead of the challenge's or the metadata's ({@link Discovery.selectScope}). */
  readonly scope?: ReadonlyArray<string> | undefined
  /** A token this close to its expiry counts as expired and is refreshed first; 30 seconds by default. */
  readonly expiryMargin?: Duration.Input | undefined
}

/** The client side of authorization for the HTTP transports. */
export interface OAuthClientShape {
  /**
   * The token to send to `serverUrl`: the stored one while it is valid, a
   * refreshed one when it has expired (a refused refresh forgets it), or
   * `None` when there is none yet (send the request without; its 401 leads to
   * {@link authorize}).
   */
  readonly accessToken: (serverUrl: string | URL) => Effect.Effect<Option.Option<string>, OAuthClientError>
  /**
   * Obtains a new token after `serverUrl` answered 401 or 403 with
   * `wwwAuthenticate`: discovery, registration and the grant; a stored refresh
   * token is tried first for a 401. Returns the token to retry with.
   *
   * `refused` is the token the refused request carried, undefined when it
   * carried none. Logins and refreshes run one at a time, and a caller finds
   * what the one before it obtained: when the stored token is valid and is
   * not `refused` (a concurrent request renewed it), or the request carried
   * no token and was refused with a 401, the stored token is returned without
   * asking anyone, so concurrent refusals cost one login. The caller bounds
   * its retries: a server that refuses every token would otherwise loop.
   */
  readonly authorize: (
    serverUrl: string | URL,
    wwwAuthenticate: string | ReadonlyArray<string> | undefined,
    refused?: string | undefined
  ) => Effect.Effect<string, OAuthClientError>
}

/** The OAuth client of an MCP client. */
export class OAuthClient extends Context.Service<OAuthClient, OAuthClientShape>()("@effect-mcp/auth/OAuthClient") {}

const offlineAccess = "offline_access"

interface Known {
  readonly discovered: Discovery.Discovered
  readonly context: Grants.Context
}

/** An OAuth client using the services in context; the {@link UserAgent} is needed for the authorization code grant only. */
export const make = (options: Options = {}): Effect.Effect<OAuthClientShape, never, TokenStore | ClientRegistration> =>
  Effect.gen(function* () {
    const store = yield* TokenStore
    const registration = yield* ClientRegistration
    const userAgent = yield* Effect.serviceOption(UserAgent)
    // With a DPoP key, every token request carries a proof and the tokens are bound to the key.
    const dpop = Option.getOrUndefined(yield* Effect.serviceOption(Dpop))
    const http = Discovery.httpOptions(options)
    const grant = options.grant ?? "authorization_code"
    const marginMs = Duration.toMillis(options.expiryMargin ?? Duration.seconds(30))
    const lock = yield* Semaphore.make(1)
    // Redirect URIs must be loopback or HTTPS (UserAgent.checkRedirectUri): checked whatever made the user agent.
    const invalidRedirect =
      grant === "authorization_code" && Option.isSome(userAgent)
        ? checkRedirectUri(userAgent.value.redirectUri)
        : undefined
    const redirectRefused =
      invalidRedirect === undefined
        ? undefined
        : new AuthorizationFailed({ step: "redirect uri", detail: invalidRedirect.message })
    // What discovery and registration found per server, so a refresh needs neither again.
    const known = new Map<string, Known>()

    const keyOf = (serverUrl: string | URL) =>
      Effect.try({
        try: () => ProtectedResourceMetadata.canonicalResource(serverUrl),
        catch: () =>
          new DiscoveryFailed({ step: "server URL", url: String(serverUrl), detail: "not an absolute http(s) URL" })
      })

    const learn = (
      key: string,
      wwwAuthenticate: string | ReadonlyArray<string> | undefined,
      granted?: ReadonlyArray<string> | undefined
    ) =>
      Effect.gen(function* () {
        // Before anything is sent: a user agent made by hand bypasses `UserAgent.make`'s check.
        if (redirectRefused !== undefined) return yield* redirectRefused
        const discovered = yield* Discovery.discover(key, wwwAuthenticate, options)
        const credentials = yield* registration.register(discovered.authorizationServer, {
          redirectUris: grant === "authorization_code" && Option.isSome(userAgent) ? [userAgent.value.redirectUri] : [],
          grantTypes:
            grant === "authorization_code"
              ? ["authorization_code", "refresh_token"]
              : [grant === "jwt_bearer" ? jwtBearerGrantType : grant]
        })
        const entry: Known = {
          discovered,
          context: {
            server: discovered.authorizationServer,
            credentials,
            resource: discovered.resource,
            scope: requestedScope(discovered, granted),
            http,
            dpop
          }
        }
        known.set(key, entry)
        return entry
      })

    /**
     * The scopes of a login: the configured ones, else discovery's; for a
     * step-up, together with those granted before (SEP-2350: the new token
     * replaces the old one, so it must keep what that one could do). When the
     * authorization server lists `offline_access`, a user's login asks for it
     * too (SEP-2207: a refresh token, not the user again, when it expires).
     */
    const requestedScope = (discovered: Discovery.Discovered, granted: ReadonlyArray<string> | undefined) => {
      const base = options.scope ?? discovered.scope
      if (base === undefined) return undefined
      const scope = new Set(granted !== undefined && options.scope === undefined ? [...granted, ...base] : base)
      if (grant === "authorization_code" && discovered.authorizationServer.scopes_supported?.includes(offlineAccess)) {
        scope.add(offlineAccess)
      }
      return [...scope]
    }

    const assertionGrant = (context: Grants.Context) =>
      options.assertion === undefined
        ? Effect.die(new Error("OAuthClient: the jwt_bearer grant needs an assertion option"))
        : Effect.flatMap(
            options.assertion({ issuer: context.server.issuer, resource: context.resource, scope: context.scope }),
            (assertion) => jwtBearer(context, assertion)
          )

    const expired = (tokens: Tokens, now: number) =>
      tokens.expiresAt !== undefined && tokens.expiresAt - marginMs <= now

    /**
     * The stored tokens refreshed, at the authorization server that issued
     * them only: a resource that now names another (a migration, or metadata
     * an attacker controls) never gets the refresh token (SEP-2352); the
     * tokens are forgotten and the new server starts afresh. A refused
     * refresh token is forgotten too; one that could not be sent (the server
     * unreachable, failing) is kept for the next try.
     */
    const tryRefresh = (key: string, tokens: Tokens) =>
      Effect.gen(function* () {
        const entry = known.get(key) ?? (yield* learn(key, undefined))
        if (entry.context.server.issuer !== tokens.issuer) {
          yield* store.remove(key)
          yield* Effect.logDebug(
            `stored tokens forgotten: issued by ${tokens.issuer}, the resource now names ${entry.context.server.issuer}`
          )
          return Option.none<string>()
        }
        const refreshed = yield* Grants.refresh(entry.context, tokens)
        yield* store.set(key, refreshed)
        return Option.some(refreshed.accessToken)
      }).pipe(
        Effect.catch((error) =>
          error._tag === "AuthorizationFailed" && error.refused === true
            ? Effect.as(
                Effect.andThen(
                  store.remove(key),
                  Effect.logDebug(`token refresh refused, tokens forgotten: ${error.message}`)
                ),
                Option.none<string>()
              )
            : Effect.as(Effect.logDebug(`token refresh failed, tokens kept: ${error.message}`), Option.none<string>())
        )
      )

    const accessToken: OAuthClientShape["accessToken"] = (serverUrl) =>
      Effect.gen(function* () {
        const key = yield* keyOf(serverUrl)
        const tokens = yield* store.get(key)
        if (tokens === undefined) return Option.none()
        if (!expired(tokens, yield* Clock.currentTimeMillis)) return Option.some(tokens.accessToken)
        return yield* lock.withPermits(1)(
          Effect.gen(function* () {
            // Another fiber may have refreshed, or logged in, while this one waited.
            const current = yield* store.get(key)
            if (current === undefined) return Option.none()
            if (!expired(current, yield* Clock.currentTimeMillis)) return Option.some(current.accessToken)
            if (current.refreshToken !== undefined) return yield* tryRefresh(key, current)
            // Expired and nothing to renew it with: forgotten (under the lock, so never a token stored meanwhile).
            yield* store.remove(key)
            return Option.none()
          })
        )
      })

    const authorize: OAuthClientShape["authorize"] = (serverUrl, wwwAuthenticate, refused) =>
      Effect.gen(function* () {
        const key = yield* keyOf(serverUrl)
        const stepUp = Option.exists(
          wwwAuthenticate === undefined ? Option.none() : Challenge.parse(wwwAuthenticate),
          (challenge) => challenge.error === "insufficient_scope"
        )
        return yield* lock.withPermits(1)(
          Effect.gen(function* () {
            const stored = yield* store.get(key)
            // A concurrent request renewed the token while this one waited (or before it asked): that
            // renewal answers this refusal too, so concurrent refusals cost one login or refresh. A 401 to a
            // request without a token takes any valid one; otherwise only one other than the token refused
            // (a step-up given no `refused` logs in: the token it presented is unknown).
            if (stored !== undefined && !expired(stored, yield* Clock.currentTimeMillis)) {
              const renewed = refused === undefined ? !stepUp : stored.accessToken !== refused
              if (renewed) return stored.accessToken
            }
            const entry = yield* learn(key, wwwAuthenticate, stepUp ? stored?.scope : undefined)
            // A 401 on a stored token that can be refreshed (not a 403: a refresh never adds scopes); `tryRefresh`
            // sends it only to the authorization server that issued it.
            if (stored?.refreshToken !== undefined && !stepUp) {
              const refreshed = yield* tryRefresh(key, stored)
              if (Option.isSome(refreshed)) return refreshed.value
            }
            const tokens =
              grant === "client_credentials"
                ? yield* Grants.clientCredentials(entry.context)
                : grant === "jwt_bearer"
                  ? yield* assertionGrant(entry.context)
                  : Option.isNone(userAgent)
                    ? yield* Effect.die(
                        new Error("OAuthClient: the authorization code grant needs a UserAgent service")
                      )
                    : yield* Grants.authorizationCode(entry.context, userAgent.value)
            yield* store.set(key, tokens)
            return tokens.accessToken
          })
        )
      })

    return { accessToken, authorize }
  })

/**
 * {@link make} as a Layer; it needs a {@link TokenStore} (e.g.
 * `TokenStore.layerMemory`), a {@link ClientRegistration} and, for the
 * authorization code grant, a {@link UserAgent}.
 */
export const layer = (options: Options = {}): Layer.Layer<OAuthClient, never, TokenStore | ClientRegistration> =>
  Layer.effect(OAuthClient, make(options))
