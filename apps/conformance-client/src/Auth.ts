/**
 * How the client logs in for the authorization scenarios of the conformance
 * suite: the OAuth client of @effect-mcp/auth over the suite's mock servers
 * (plain `http:` on loopback), registering with the credentials the harness
 * hands over (`MCP_CONFORMANCE_CONTEXT`), its client ID metadata document URL,
 * or dynamically; the user-agent step is headless, since the suite's
 * authorization endpoint redirects at once.
 */
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import { AuthorizationFailed } from "@effect-mcp/auth/OAuthClientError"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"

/**
 * The client ID metadata document URL the suite expects a client to use where
 * the authorization server supports them (the suite never fetches it from the client).
 */
export const clientMetadataUrl = "https://conformance-test.local/client-metadata.json"

/**
 * How long each request to the suite's servers may take. The suite starts
 * every scenario's client at once and serves them all from its one process:
 * on a loaded machine an answer took over 30 seconds. The suite's own bound
 * per client (the tests give 2 minutes) is the one that matters.
 */
const timeoutMs = 60_000

/** Never visited: the user agent returns the redirect instead of following it. */
export const redirectUri = "http://127.0.0.1:8765/callback"

/**
 * The user agent of an authorization endpoint that answers at once: the
 * authorization URL is requested without following its redirect, and the
 * redirect's `Location` is the answer.
 */
export const headlessUserAgent = UserAgent.make(redirectUri, (authorizationUrl) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(authorizationUrl, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) })
      await response.body?.cancel()
      const location = response.headers.get("location")
      if (response.status < 300 || response.status >= 400 || location === null) {
        throw new Error(`the authorization endpoint answered ${response.status} without a redirect`)
      }
      return new URL(location, authorizationUrl)
    },
    catch: (error) =>
      new AuthorizationFailed({ step: "user agent", detail: error instanceof Error ? error.message : "failed" })
  })
)

const text = (context: unknown, key: string): string | undefined =>
  Predicate.isObject(context) && typeof (context as Record<string, unknown>)[key] === "string"
    ? ((context as Record<string, unknown>)[key] as string)
    : undefined

/** Pre-registered credentials from the harness's context (`client_id`, `client_secret`), if any. */
export const preRegistered = (context: unknown): ClientRegistration.ClientCredentials | undefined => {
  const clientId = text(context, "client_id")
  if (clientId === undefined) return undefined
  const clientSecret = text(context, "client_secret")
  return clientSecret === undefined ? { clientId, authMethod: "none" } : { clientId, clientSecret }
}

/** The OAuth client of a scenario, with the credentials its context carries. */
export const layer = (context: unknown): Layer.Layer<OAuthClient.OAuthClient> =>
  OAuthClient.layer({ allowInsecureRequests: true, timeout: timeoutMs }).pipe(
    Layer.provide(
      Layer.mergeAll(
        TokenStore.layerMemory,
        ClientRegistration.layer({
          preRegistered: preRegistered(context),
          clientMetadataUrl,
          allowInsecureRequests: true,
          timeout: timeoutMs
        }),
        Layer.succeed(UserAgent.UserAgent, headlessUserAgent)
      )
    )
  )
