/**
 * The hook through which the HTTP server transports (Streamable HTTP and
 * legacy SSE) require credentials, without knowing how they are checked:
 * `@effect-mcp/auth`'s `HttpProtection` builds one from an OAuth protected
 * resource and a token verifier, a test or a gateway writes its own.
 *
 * With a hook, every request to the MCP endpoint (CORS preflights aside) is
 * authenticated before anything else is read; a refusal is answered as the
 * hook says (401 with a `WWW-Authenticate` challenge, 400, 503). The request
 * then runs as its {@link Authenticated} principal: a stateful session belongs
 * to the principal that opened it (another one naming its `Mcp-Session-Id` is
 * answered 404, as for an unknown session), the per-client session quota
 * counts principals instead of addresses, and a message whose method needs
 * scopes the principal lacks (see `requiredScopes`) is refused with the
 * hook's 403 before it reaches the session.
 *
 * Without a hook none of this runs: the transports do no per-request work for it.
 */
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"

/** The principal a request was authenticated as. */
export type Authenticated = Transport.Authenticated

/** How an HTTP server transport authenticates requests and refuses them. */
export interface Authentication {
  /**
   * Verifies the credentials of a request; fails with the response to send
   * instead (401 with its challenge, 400, 503). It sees the request's headers
   * and URL only: the body is read after it succeeds.
   */
  readonly authenticate: (
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<Authenticated, HttpServerResponse.HttpServerResponse>
  /**
   * The response to a request whose messages need `required` scopes that
   * `authenticated` lacks (403 `insufficient_scope`). `required` lists every
   * scope the messages need, so the client can ask for them in one step-up.
   */
  readonly insufficientScope: (
    authenticated: Authenticated,
    required: ReadonlyArray<string>
  ) => HttpServerResponse.HttpServerResponse
}

/**
 * The scopes a message needs: `method` is the JSON-RPC method, `target` what
 * it names (a tool or prompt name for `tools/call` and `prompts/get`, a
 * resource URI for `resources/read`, `resources/subscribe` and
 * `resources/unsubscribe`). Undefined or empty when it needs none.
 * McpServer's `requiredScopesOf` reads them from the registered items.
 */
export type RequiredScopes = (method: string, target: string) => ReadonlyArray<string> | undefined
