/**
 * The official SDK client (`@modelcontextprotocol/sdk` 1.x) logging in to a
 * protected server, for the authorization tests: an `OAuthClientProvider`
 * kept in memory that records every secret it is given, and the SDK's
 * documented login pattern (the transport throws `UnauthorizedError` after
 * sending the user to the authorization URL; the application finishes with
 * `finishAuth(code)` and connects again) with the headless user agent in the
 * browser's place.
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions
} from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as ServerProcess from "../support/ServerProcess.ts"
import type * as Headless from "./headlessUserAgent.ts"

/** The redirect URI the SDK's client registers (the headless user agent stops there). */
export const redirectUri = "http://127.0.0.1:1/callback"

/**
 * oidc-provider (issuing JWTs for any loopback resource, plus `options`) and
 * the everything server protected by it, advertising `scopes`
 * (comma-separated; the 401 challenge asks for them) and with
 * `test_simple_text` needing notes:write when `stepUp` is set.
 */
export const start = (scopes: string, stepUp: boolean, options: OidcProvider.StartOptions = {}) =>
  Effect.gen(function* () {
    const provider = yield* OidcProvider.startWith({
      acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:"),
      ...options
    })
    const server = yield* ServerProcess.spawnHttp([
      "--auth",
      "--auth-issuer",
      provider.issuer,
      "--auth-scopes",
      scopes,
      ...(stepUp ? ["--auth-tool-scope", "test_simple_text=notes:write"] : [])
    ])
    return { provider, server }
  })

/** A provider kept in memory, recording every token, verifier and secret it is given in `secrets`. */
export const provider = (options: {
  /** A pre-registered client id; dynamic registration (RFC 7591) when absent. */
  readonly clientId?: string
  /** Whether the client asks for refresh tokens. */
  readonly refresh: boolean
  /** The registration's token endpoint authentication; `none` (a public client) by default. */
  readonly authMethod?: "none" | "client_secret_post" | "client_secret_basic"
}) => {
  const secrets = new Set<string>()
  let information: OAuthClientInformationMixed | undefined =
    options.clientId === undefined ? undefined : { client_id: options.clientId }
  let tokens: OAuthTokens | undefined
  let verifier = ""
  let pending: URL | undefined
  let discovery: OAuthDiscoveryState | undefined
  const clientMetadata: OAuthClientMetadata = {
    client_name: "sdk-e2e",
    redirect_uris: [redirectUri],
    grant_types: options.refresh ? ["authorization_code", "refresh_token"] : ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: options.authMethod ?? "none"
  }
  const oauthProvider: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUri
    },
    get clientMetadata() {
      return clientMetadata
    },
    clientInformation: () => information,
    tokens: () => tokens,
    saveTokens: (saved) => {
      tokens = saved
      secrets.add(saved.access_token)
      if (saved.refresh_token !== undefined) secrets.add(saved.refresh_token)
      if (saved.id_token !== undefined) secrets.add(saved.id_token)
    },
    redirectToAuthorization: (url) => {
      pending = url
    },
    saveCodeVerifier: (saved) => {
      verifier = saved
      secrets.add(saved)
    },
    codeVerifier: () => verifier,
    // Kept beside the verifier: the SDK binds the login's callback to the authorization server it started with.
    saveDiscoveryState: (state) => {
      discovery = state
    },
    discoveryState: () => discovery,
    // Without it the SDK cannot register: a pre-registered client leaves it out.
    ...(options.clientId === undefined
      ? {
          saveClientInformation: (saved: OAuthClientInformationMixed) => {
            information = saved
            if ("client_secret" in saved && saved.client_secret !== undefined) secrets.add(saved.client_secret)
            const access = (saved as { registration_access_token?: unknown }).registration_access_token
            if (typeof access === "string") secrets.add(access)
          }
        }
      : {})
  }
  return {
    provider: oauthProvider,
    secrets,
    tokens: () => tokens,
    /** Replaces the stored tokens, as another run of the application could have left them. */
    setTokens: (replaced: OAuthTokens) => {
      tokens = replaced
    },
    information: () => information,
    /** The authorization URL the SDK sent the user to last, taken. */
    takePending: () => {
      const url = pending
      pending = undefined
      return url
    }
  }
}

/** What {@link provider} returns. */
export type SdkProvider = ReturnType<typeof provider>

/** Every error message (and stack) the SDK produced during a run: thrown, or reported to `onerror`. */
export type Errors = Array<string>

/** An error as it would be printed. */
export const describeError = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error)

/** The user-agent step of a login the SDK started: the redirect's code (and all its parameters), handed to `finish`. */
export const login = async (
  browser: ReturnType<typeof Headless.make>,
  authorizationUrl: URL | undefined,
  finish: (code: string, callback: URLSearchParams) => Promise<void>
) => {
  if (authorizationUrl === undefined) throw new Error("the SDK sent no one to log in")
  const redirect = await Effect.runPromise(browser.userAgent.authorize(authorizationUrl))
  const code = redirect.searchParams.get("code")
  if (code === null) throw new Error(`the login was refused: ${redirect.searchParams.get("error")}`)
  await finish(code, redirect.searchParams)
}

/**
 * A connected SDK client, logging in when its transport says so (the code
 * goes to the refused transport's `finishAuth`, then a new transport
 * connects); closed with the scope. Errors are appended to `errors`.
 */
export const connect = (
  url: string,
  sdk: SdkProvider,
  browser: ReturnType<typeof Headless.make>,
  errors: Errors,
  options: Omit<StreamableHTTPClientTransportOptions, "authProvider"> = {}
): Effect.Effect<{ readonly client: Client; readonly transport: StreamableHTTPClientTransport }, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const open = () => new StreamableHTTPClientTransport(new URL(url), { ...options, authProvider: sdk.provider })
        let transport = open()
        const attempt = async () => {
          const client = new Client({ name: "sdk-e2e", version: "1.0.0" })
          transport.onerror = (error) => errors.push(describeError(error))
          await client.connect(transport)
          return { client, transport }
        }
        try {
          return await attempt()
        } catch (error) {
          errors.push(describeError(error))
          if (!(error instanceof UnauthorizedError)) throw error
          await login(browser, sdk.takePending(), (code) => transport.finishAuth(code))
          transport = open()
          return await attempt()
        }
      },
      catch: (error) => (error instanceof Error ? error : new Error(String(error)))
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

/**
 * A fetch for the SDK's transport that records each request as
 * `METHOD origin/path status`, answering 404 itself for the URLs `hidden`
 * selects (`... 404 (hidden)`).
 */
export const recordingFetch = (hidden: (url: URL) => boolean = () => false) => {
  const seen: Array<string> = []
  const fetchLike: FetchLike = async (input, init) => {
    const url = new URL(String(input))
    if (hidden(url)) {
      seen.push(`${init?.method ?? "GET"} ${url.origin}${url.pathname} 404 (hidden)`)
      return new Response(null, { status: 404 })
    }
    const response = await fetch(input, init)
    seen.push(`${init?.method ?? "GET"} ${url.origin}${url.pathname} ${response.status}`)
    return response
  }
  return { fetch: fetchLike, seen }
}

/** Fails when any of `secrets` appears in any of `texts` (log output, error messages). */
export const assertNoSecret = (secrets: Iterable<string>, texts: ReadonlyArray<string>) => {
  for (const secret of secrets) {
    for (const text of texts) {
      if (text.includes(secret)) throw new Error(`a secret appears in: ${text.slice(0, 80)}...`)
    }
  }
}

/** The text blocks of a tool result. */
export const textOf = (result: unknown) =>
  ((result as { content?: ReadonlyArray<{ type: string; text?: string }> }).content ?? [])
    .map((block) => block.text ?? "")
    .join("")
