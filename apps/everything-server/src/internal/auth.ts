/**
 * `--auth`: the everything server as an OAuth 2.1 protected resource. Loaded
 * only for `--auth` (a dynamic import in main.ts), so a server started
 * without it never loads `@effect-mcp/auth` and its JOSE library.
 *
 * Nothing is fetched at start: the issuer's metadata and keys are fetched
 * on the first token and cached, so the server starts while its issuer is
 * down, and an unreachable issuer costs a 503 on the request.
 */
import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import type * as HttpAuthentication from "@effect-mcp/http/HttpAuthentication"
import type * as HttpRouter from "effect/http/HttpRouter"
import type * as Layer from "effect/Layer"
import type * as Cli from "../Cli.ts"

// An http: issuer is accepted on this machine only (a test's provider); anywhere else it must be https:.
const isLoopback = (url: string) => {
  const host = new URL(url).hostname
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** What `NodeMcpServer`'s `auth` option takes (its `HttpAuth`; this module stays free of Node). */
export interface Protection {
  readonly authentication: HttpAuthentication.Authentication
  readonly routes: Layer.Layer<never, never, HttpRouter.HttpRouter>
  readonly requiredScopes: HttpAuthentication.RequiredScopes
}

/** The protection of the endpoint at `endpointUrl`, whose URL is the audience unless `--auth-audience` says. */
export const protection =
  (auth: Cli.Auth) =>
  (endpointUrl: string): Protection => {
    const audience = auth.audience ?? endpointUrl
    const allowInsecureRequests = isLoopback(auth.issuer)
    const toolScopes = auth.toolScopes ?? {}
    const protection = HttpProtection.make({
      resource: audience,
      authorizationServers: [auth.issuer],
      scopesSupported: auth.scopes,
      resourceName: "mcp-everything-server",
      verifier: JwtVerifier.make({ issuer: auth.issuer, audience, allowInsecureRequests }),
      authorizationServerMetadata: { allowInsecureRequests }
    })
    return {
      authentication: protection.authentication,
      routes: protection.routes,
      requiredScopes: (method, target) =>
        method === "tools/call" && Object.hasOwn(toolScopes, target) ? toolScopes[target] : undefined
    }
  }
