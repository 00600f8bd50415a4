/**
 * How an OAuth client is known to an authorization server, as a service:
 * pre-registered credentials, a client ID metadata document URL (MCP
 * 2025-11-25: the URL is the client id, used when the authorization server
 * advertises `client_id_metadata_document_supported`), or dynamic client
 * registration (RFC 7591) at the server's `registration_endpoint`. {@link layer}
 * tries them in that order; a dynamic registration is kept per issuer for the
 * life of the layer.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as oauth from "oauth4webapi"
import * as Http from "./internal/clientHttp.ts"
import { isLoopbackHost } from "./internal/loopback.ts"
import { RegistrationFailed } from "./OAuthClientError.ts"

/** How the client authenticates at the token endpoint. */
export type AuthMethod = "none" | "client_secret_basic" | "client_secret_post" | "private_key_jwt"

/** A client's identity at one authorization server. */
export interface ClientCredentials {
  /** The client id (a metadata document URL for CIMD). */
  readonly clientId: string
  /** The client secret of a confidential client. */
  readonly clientSecret?: string | undefined
  /** The token endpoint authentication; `client_secret_basic` with a secret, `none` without, by default. */
  readonly authMethod?: AuthMethod | undefined
  /** The private key for `private_key_jwt`. */
  readonly privateKey?: Parameters<typeof oauth.PrivateKeyJwt>[0] | undefined
}

/** What the flow needs registered. */
export interface Requirements {
  /** The redirect URIs of the user agent (none for machine clients). */
  readonly redirectUris: ReadonlyArray<string>
  /** The grant types the client will use. */
  readonly grantTypes: ReadonlyArray<string>
}

/** Finds the client's credentials at an authorization server. */
export interface ClientRegistrationShape {
  /** The client's credentials at `server`, registering it when needed. */
  readonly register: (
    server: oauth.AuthorizationServer,
    requirements: Requirements
  ) => Effect.Effect<ClientCredentials, RegistrationFailed>
}

/** The client registration of an OAuth client. */
export class ClientRegistration extends Context.Service<ClientRegistration, ClientRegistrationShape>()(
  "@effect-mcp/auth/ClientRegistration"
) {}

/** The ways {@link make} may find or make a registration, tried in this order. */
export interface Options {
  /** Credentials given by the authorization server's operator: for every issuer, or per issuer. */
  readonly preRegistered?: ClientCredentials | ((issuer: string) => ClientCredentials | undefined) | undefined
  /**
   * The HTTPS URL of this client's metadata document (CIMD); the client id
   * where it is supported. It must pass {@link checkClientMetadataUrl}:
   * `https:` with a path, or `http:` to a loopback host with
   * `allowInsecureRequests` (a local authorization server in tests).
   */
  readonly clientMetadataUrl?: string | undefined
  /** The metadata to register dynamically; redirect URIs and grant types come from the flow when absent. */
  readonly metadata?: Partial<oauth.OmitSymbolProperties<oauth.Client>> | undefined
  /** Whether to register dynamically when nothing else applies; true by default. */
  readonly dynamic?: boolean | undefined
  /** How long a registration request may take; 10 seconds by default. */
  readonly timeout?: Duration.Input | undefined
  /** Allows `http:` registration endpoints, and an `http:` loopback `clientMetadataUrl` (loopback servers in tests). */
  readonly allowInsecureRequests?: boolean | undefined
  /** The most bytes of a registration answer read; 1 MiB by default (a larger answer fails, naming its URL and the limit). */
  readonly maxResponseBytes?: number | undefined
}

/**
 * A client ID metadata document URL that MCP 2025-11-25 forbids (the
 * `client_id` URL MUST use the `https` scheme and contain a path component;
 * the CIMD draft adds no fragment and no user name or password): `NotAUrl`,
 * `NotHttps`, `NoPath` (only the origin, `/` at most), `Fragment` or
 * `Credentials`.
 */
export class InvalidClientMetadataUrl extends Schema.TaggedError<InvalidClientMetadataUrl>()(
  "InvalidClientMetadataUrl",
  {
    clientMetadataUrl: Schema.String,
    reason: Schema.Literals(["NotAUrl", "NotHttps", "NoPath", "Fragment", "Credentials"])
  }
) {
  override get message(): string {
    return `client ID metadata document URL ${JSON.stringify(this.clientMetadataUrl)} ${clientMetadataUrlReasons[this.reason]}`
  }
}

const clientMetadataUrlReasons: Record<InvalidClientMetadataUrl["reason"], string> = {
  NotAUrl: "is not an absolute URL",
  NotHttps: "must be https: (http: to a loopback host only with allowInsecureRequests)",
  NoPath: "must have a path (the document's, not the bare origin)",
  Fragment: "has a fragment",
  Credentials: "has a user name or password"
}

/**
 * Checks a client ID metadata document URL: undefined when it is `https:`
 * with a path, without a fragment or credentials (or `http:` to a loopback
 * host, with `allowInsecureRequests`); the reason it is refused otherwise.
 */
export const checkClientMetadataUrl = (
  clientMetadataUrl: string,
  allowInsecureRequests = false
): InvalidClientMetadataUrl | undefined => {
  const refuse = (reason: InvalidClientMetadataUrl["reason"]) =>
    new InvalidClientMetadataUrl({ clientMetadataUrl, reason })
  let url: URL
  try {
    url = new URL(clientMetadataUrl)
  } catch {
    return refuse("NotAUrl")
  }
  const insecureAllowed = allowInsecureRequests && url.protocol === "http:" && isLoopbackHost(url.hostname)
  if (url.protocol !== "https:" && !insecureAllowed) return refuse("NotHttps")
  if (url.pathname === "/" || url.pathname === "") return refuse("NoPath")
  if (url.hash !== "" || clientMetadataUrl.includes("#")) return refuse("Fragment")
  if (url.username !== "" || url.password !== "") return refuse("Credentials")
  return undefined
}

const authMethods: ReadonlyArray<AuthMethod> = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]

/**
 * The token endpoint authentication to register with: `none` (a public
 * client) unless the server does not take it, then the first secret-based
 * method it does.
 */
const registrationAuthMethod = (server: oauth.AuthorizationServer): AuthMethod => {
  const supported = server.token_endpoint_auth_methods_supported
  if (supported === undefined || supported.includes("none")) return "none"
  return (
    supported.find(
      (m): m is "client_secret_basic" | "client_secret_post" =>
        m === "client_secret_basic" || m === "client_secret_post"
    ) ?? "none"
  )
}

const isNativeRedirect = (uri: string): boolean => {
  try {
    const url = new URL(uri)
    if (url.protocol !== "http:" && url.protocol !== "https:") return true
    return url.hostname === "127.0.0.1" || url.hostname === "[::1]" || url.hostname === "localhost"
  } catch {
    return false
  }
}

/**
 * The registration server's answer (RFC 7591 §3.2). Read here rather than by
 * oauth4webapi, which refuses an answer with a `client_secret` and no
 * `client_secret_expires_at`: servers commonly leave it out, and the client
 * has no use for it (a refused secret fails at the token endpoint anyway).
 */
const registrationAnswer = async (response: Response): Promise<oauth.Client> => {
  if (response.status !== 201 && response.status !== 200) {
    // The error answer (`invalid_redirect_uri`, `invalid_client_metadata`...), as oauth4webapi describes it.
    return oauth.processDynamicClientRegistrationResponse(response)
  }
  const body: unknown = await response.json()
  const clientId = typeof body === "object" && body !== null ? (body as { client_id?: unknown }).client_id : undefined
  if (typeof clientId !== "string" || clientId === "") {
    throw new oauth.OperationProcessingError("the registration answer has no client_id")
  }
  return body as oauth.Client
}

/**
 * A registration service trying {@link Options} in order: pre-registered,
 * metadata document, dynamic. A `clientMetadataUrl` that fails
 * {@link checkClientMetadataUrl} is a programming error, thrown as the typed
 * `InvalidClientMetadataUrl` before anything is registered or sent.
 *
 * @throws InvalidClientMetadataUrl
 */
export const make = (options: Options): ClientRegistrationShape => {
  if (options.clientMetadataUrl !== undefined) {
    const invalid = checkClientMetadataUrl(options.clientMetadataUrl, options.allowInsecureRequests === true)
    if (invalid !== undefined) throw invalid
  }
  const http: Http.HttpOptions = {
    allowInsecureRequests: options.allowInsecureRequests,
    timeoutMs: Duration.toMillis(options.timeout ?? Duration.seconds(10)),
    maxResponseBytes: options.maxResponseBytes
  }
  const registered = new Map<string, Promise<ClientCredentials>>()

  const dynamic = (server: oauth.AuthorizationServer, requirements: Requirements) => {
    const known = registered.get(server.issuer)
    if (known !== undefined) return known
    const metadata: Partial<oauth.OmitSymbolProperties<oauth.Client>> = {
      redirect_uris: [...requirements.redirectUris],
      grant_types: [...requirements.grantTypes],
      response_types: requirements.redirectUris.length > 0 ? ["code"] : [],
      token_endpoint_auth_method: registrationAuthMethod(server),
      // MCP 2025-11-25 (SEP-837): the client says what it is; a loopback or custom-scheme redirect is a native app.
      application_type: requirements.redirectUris.every(isNativeRedirect) ? "native" : "web",
      ...options.metadata
    }
    const attempt = (async () => {
      const client = await registrationAnswer(
        await oauth.dynamicClientRegistrationRequest(server, metadata, Http.requestOptions(http))
      )
      const method = client.token_endpoint_auth_method
      return {
        clientId: client.client_id,
        clientSecret: typeof client.client_secret === "string" ? client.client_secret : undefined,
        authMethod: authMethods.find((m) => m === method)
      }
    })()
    registered.set(server.issuer, attempt)
    attempt.catch(() => registered.delete(server.issuer))
    return attempt
  }

  const register: ClientRegistrationShape["register"] = (server, requirements) => {
    const fail = (detail: string) => new RegistrationFailed({ issuer: server.issuer, detail })
    const pre =
      typeof options.preRegistered === "function" ? options.preRegistered(server.issuer) : options.preRegistered
    if (pre !== undefined) return Effect.succeed(pre)
    if (options.clientMetadataUrl !== undefined && server.client_id_metadata_document_supported === true) {
      return Effect.succeed({ clientId: options.clientMetadataUrl, authMethod: "none" as const })
    }
    if (options.dynamic === false) return Effect.fail(fail("no registration applies to this authorization server"))
    if (server.registration_endpoint === undefined) {
      return Effect.fail(
        fail(
          "no pre-registered client, and the server supports neither client ID metadata documents nor dynamic registration"
        )
      )
    }
    return Http.attempt(
      () => dynamic(server, requirements),
      (detail) => fail(`dynamic registration: ${detail}`)
    )
  }
  return { register }
}

/**
 * {@link make} as a Layer; a `clientMetadataUrl` that fails
 * {@link checkClientMetadataUrl} makes building it die with
 * `InvalidClientMetadataUrl` (a configuration error; check beforehand with
 * {@link checkClientMetadataUrl} to report it otherwise).
 */
export const layer = (options: Options): Layer.Layer<ClientRegistration> =>
  Layer.sync(ClientRegistration, () => make(options))
