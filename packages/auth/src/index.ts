/**
 * OAuth 2.1 authorization for MCP: the resource-server side (bearer token
 * verification against an authorization server's keys or introspection
 * endpoint, the verified principal, protected resource metadata and
 * `WWW-Authenticate` challenges), and the client side (discovery after a 401,
 * client registration, authorization code with PKCE, refresh, client credentials).
 *
 * @packageDocumentation
 * @module @effect-mcp/auth
 */
export * as AuthError from "./AuthError.ts"
export * as Bearer from "./Bearer.ts"
export * as Challenge from "./Challenge.ts"
export * as ClientRegistration from "./ClientRegistration.ts"
export * as Discovery from "./Discovery.ts"
export * as Dpop from "./Dpop.ts"
export * as FileTokenStore from "./FileTokenStore.ts"
export * as HttpProtection from "./HttpProtection.ts"
export * as IdentityAssertion from "./IdentityAssertion.ts"
export * as IntrospectionVerifier from "./IntrospectionVerifier.ts"
export * as JwtBearer from "./JwtBearer.ts"
export * as JwtVerifier from "./JwtVerifier.ts"
export * as OAuthClient from "./OAuthClient.ts"
export * as OAuthClientError from "./OAuthClientError.ts"
export * as OAuthHttpClient from "./OAuthHttpClient.ts"
export * as Principal from "./Principal.ts"
export * as ProtectedResource from "./ProtectedResource.ts"
export * as ProtectedResourceMetadata from "./ProtectedResourceMetadata.ts"
export * as TokenStore from "./TokenStore.ts"
export * as TokenVerifier from "./TokenVerifier.ts"
export * as UserAgent from "./UserAgent.ts"
