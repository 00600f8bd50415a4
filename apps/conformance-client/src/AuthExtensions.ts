/**
 * What the client does for the authorization extension scenarios of the
 * official conformance suite: client credentials (SEP-1046, `client_secret_basic`
 * and `private_key_jwt`), enterprise-managed authorization / cross-app access
 * (an ID-JAG from the identity provider's token exchange, then the JWT bearer
 * grant), workload identity (the JWT bearer grant with the platform's token)
 * and DPoP (a login whose token is bound to a key, presented with a proof per
 * request, server nonces honoured). The dispatch (main.ts) hands each scenario
 * named here its server URL and the harness's `MCP_CONFORMANCE_CONTEXT`; each
 * logs in through the transport's HTTP client and uses the server's tools.
 */
import * as ClientRegistration from "@effect-mcp/auth/ClientRegistration"
import * as Dpop from "@effect-mcp/auth/Dpop"
import * as IdentityAssertion from "@effect-mcp/auth/IdentityAssertion"
import * as JwtBearer from "@effect-mcp/auth/JwtBearer"
import * as OAuthClient from "@effect-mcp/auth/OAuthClient"
import * as TokenStore from "@effect-mcp/auth/TokenStore"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as jose from "jose"
import * as Auth from "./Auth.ts"
import * as ConformanceClient from "./ConformanceClient.ts"
import * as Scenarios from "./Scenarios.ts"

/** What a handler gets: the MCP server's URL and the harness's context object. */
export interface ExtensionInput {
  readonly serverUrl: string
  readonly context: Readonly<Record<string, unknown>>
}

type Handler = (args: ExtensionInput) => Effect.Effect<void, unknown>

/** A string the harness's context must carry. */
const required = (context: Readonly<Record<string, unknown>>, key: string) => {
  const value = context[key]
  return typeof value === "string"
    ? Effect.succeed(value)
    : Effect.fail(new Scenarios.ScenarioError({ message: `MCP_CONFORMANCE_CONTEXT has no ${key}` }))
}

/** Connects through `auth` (an OAuth client, with a DPoP key when the scenario binds tokens) and uses the tools. */
const run = (serverUrl: string, auth: Layer.Layer<OAuthClient.OAuthClient>) =>
  Scenarios.authorized({ context: undefined }).pipe(
    Effect.provide(
      ConformanceClient.layer({
        url: serverUrl,
        supportedVersions: ConformanceClient.versionsUpTo(process.env.MCP_CONFORMANCE_PROTOCOL_VERSION),
        auth
      })
    )
  )

/**
 * An OAuth client for loopback servers with `options` and `registration`;
 * `extra` gives it the optional services (a DPoP key, a user agent).
 */
const oauthClient = (
  options: OAuthClient.Options,
  registration: ClientRegistration.Options,
  extra?: Layer.Layer<Dpop.Dpop | UserAgent.UserAgent>
): Layer.Layer<OAuthClient.OAuthClient> => {
  const base = Layer.merge(
    TokenStore.layerMemory,
    ClientRegistration.layer({ ...registration, allowInsecureRequests: true })
  )
  return OAuthClient.layer({ ...options, allowInsecureRequests: true }).pipe(
    Layer.provide(extra === undefined ? base : Layer.merge(base, extra))
  )
}

/** Client credentials with `client_secret_basic` (`client_id`, `client_secret`). */
const clientCredentialsBasic: Handler = ({ serverUrl, context }) =>
  Effect.gen(function* () {
    const clientId = yield* required(context, "client_id")
    const clientSecret = yield* required(context, "client_secret")
    yield* run(
      serverUrl,
      oauthClient(
        { grant: "client_credentials" },
        { preRegistered: { clientId, clientSecret, authMethod: "client_secret_basic" } }
      )
    )
  })

/** Client credentials with `private_key_jwt` (`client_id`, `private_key_pem`, `signing_algorithm`). */
const clientCredentialsJwt: Handler = ({ serverUrl, context }) =>
  Effect.gen(function* () {
    const clientId = yield* required(context, "client_id")
    const pem = yield* required(context, "private_key_pem")
    const algorithm = typeof context.signing_algorithm === "string" ? context.signing_algorithm : "ES256"
    const privateKey = yield* Effect.tryPromise({
      try: () => jose.importPKCS8(pem, algorithm),
      catch: () => new Scenarios.ScenarioError({ message: `private_key_pem is not a PKCS#8 ${algorithm} key` })
    })
    yield* run(
      serverUrl,
      oauthClient(
        { grant: "client_credentials" },
        { preRegistered: { clientId, authMethod: "private_key_jwt", privateKey } }
      )
    )
  })

/**
 * Enterprise-managed authorization (SEP-990): the ID token of the user's
 * sign-in at the IdP (`idp_id_token`) is exchanged there (`idp_token_endpoint`,
 * as `idp_client_id`) for an ID-JAG, which the client (`client_id`,
 * `client_secret`) presents to the MCP server's authorization server.
 */
const enterpriseManaged: Handler = ({ serverUrl, context }) =>
  Effect.gen(function* () {
    const clientId = yield* required(context, "client_id")
    const clientSecret = yield* required(context, "client_secret")
    const assertion = IdentityAssertion.idJag({
      issuer: yield* required(context, "idp_issuer"),
      tokenEndpoint: typeof context.idp_token_endpoint === "string" ? context.idp_token_endpoint : undefined,
      idToken: yield* required(context, "idp_id_token"),
      client: { clientId: yield* required(context, "idp_client_id"), authMethod: "none" },
      allowInsecureRequests: true
    })
    yield* run(
      serverUrl,
      oauthClient(
        { grant: "jwt_bearer", assertion },
        { preRegistered: { clientId, clientSecret, authMethod: "client_secret_basic" } }
      )
    )
  })

/** Workload identity (SEP-1933): the platform's token (`valid_jwt`) as the JWT bearer assertion, as public client `client_id`. */
const workloadIdentity: Handler = ({ serverUrl, context }) =>
  Effect.gen(function* () {
    const clientId = yield* required(context, "client_id")
    const token = yield* required(context, "valid_jwt")
    yield* run(
      serverUrl,
      oauthClient(
        { grant: "jwt_bearer", assertion: JwtBearer.fixed(token) },
        { preRegistered: { clientId, authMethod: "none" }, dynamic: false }
      )
    )
  })

/** DPoP (SEP-1932): a login (dynamic registration, authorization code) whose token is bound to a fresh key. */
const dpop: Handler = ({ serverUrl }) =>
  Effect.gen(function* () {
    // One key for the token requests (the OAuth client) and the MCP requests (the HTTP client).
    const key = Layer.succeed(Dpop.Dpop, yield* Dpop.make())
    const userAgent = Layer.succeed(UserAgent.UserAgent, Auth.headlessUserAgent)
    yield* run(
      serverUrl,
      Layer.merge(oauthClient({}, { clientMetadataUrl: Auth.clientMetadataUrl }, Layer.merge(key, userAgent)), key)
    )
  })

/** One handler per extension scenario name (both suites' names). */
export const extensionScenarios: Readonly<Record<string, Handler>> = {
  "auth/client-credentials-basic": clientCredentialsBasic,
  "auth/client-credentials-jwt": clientCredentialsJwt,
  "auth/enterprise-managed-authorization": enterpriseManaged,
  "auth/cross-app-access-complete-flow": enterpriseManaged,
  "auth/wif-jwt-bearer": workloadIdentity,
  "auth/dpop": dpop,
  "auth/dpop-nonce": dpop
}
