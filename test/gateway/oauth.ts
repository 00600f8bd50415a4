/**
 * What the gateway's OAuth tests share: an endpoint protected by a real
 * provider's JWTs, and an official SDK 1.x client sending a bearer token.
 */
import * as HttpProtection from "@effect-mcp/auth/HttpProtection"
import * as JwtVerifier from "@effect-mcp/auth/JwtVerifier"
import type * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import type * as OidcProvider from "../support/OidcProvider.ts"

/** Protection by the provider's JWTs for the endpoint it is given; `wrap` changes the verifier (to record, say). */
export const protectedBy =
  (
    provider: OidcProvider.OidcProvider,
    wrap: (verifier: TokenVerifier.TokenVerifierShape) => TokenVerifier.TokenVerifierShape = (v) => v
  ) =>
  (endpoint: string) =>
    HttpProtection.make({
      resource: endpoint,
      authorizationServers: [provider.issuer],
      scopesSupported: provider.scopes,
      verifier: wrap(JwtVerifier.make({ issuer: provider.issuer, audience: endpoint, allowInsecureRequests: true })),
      authorizationServerMetadata: { allowInsecureRequests: true }
    })

/** An SDK client of `url` sending `token`, for the scope. */
export const connect = (url: string, token: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "downstream", version: "1.0.0" })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } }
        })
      )
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** The text of a tool result. */
export const textOf = (result: object) =>
  ((result as { readonly content: ReadonlyArray<{ readonly text?: string }> }).content ?? [])
    .map((c) => c.text ?? "")
    .join("")
