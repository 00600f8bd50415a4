/**
 * What a session's handlers can ask of the HTTP exchange they run in
 * (Streamable HTTP, or legacy SSE). A module of its own, apart from `StreamableHttpServer` (which re-exports
 * it), so that a handler reaching for it (e.g. a tool calling
 * `closeRequestStream`) does not load the HTTP stack into a server that
 * only speaks stdio.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type { Authenticated } from "./HttpAuthentication.ts"

/** What a session's handlers can ask of the HTTP exchange they run in. */
export interface CurrentHttpSessionShape {
  /** The `Mcp-Session-Id`, or undefined for a stateless request. */
  readonly sessionId: string | undefined
  /**
   * Whether the session has a channel for what the server sends outside any
   * request (list changes, resource updates, requests of its own): a GET
   * stream, or the legacy transport's one stream. False for the one-shot
   * session of a stateless request, which lives as long as its reply, and
   * when the server offers no GET stream (`standaloneStream: false`): a
   * server then promises no such notifications on the stateful revisions.
   * Missing means it has one.
   */
  readonly carriesUnsolicited?: boolean | undefined
  /** The revision negotiated at `initialize` (stateful sessions). */
  readonly protocolVersion: () => string | undefined
  /**
   * Ends the SSE connection that will carry the response to `requestId`
   * (the client reconnects with `Last-Event-ID` and gets the rest). Does
   * nothing when streams are not resumable, since the response would be lost.
   */
  readonly closeRequestStream: (requestId: JsonRpc.RequestId) => Effect.Effect<void>
  /** The same for the GET stream. */
  readonly closeStandaloneStream: Effect.Effect<void>
  /**
   * The principal of the session's latest authenticated request, when the
   * server authenticates requests (its `authentication` option); undefined
   * otherwise. A stateless request has its own. The session belongs to one
   * owner, but a later request may carry more scopes (a step-up).
   */
  readonly authenticated: () => Authenticated | undefined
}

/** The HTTP exchange of the session being served; provided by `StreamableHttpServer` and `SseServer` to every session they start. */
export class CurrentHttpSession extends Context.Service<CurrentHttpSession, CurrentHttpSessionShape>()(
  "@effect-mcp/http/StreamableHttpServer/CurrentHttpSession"
) {}

/**
 * Ends the SSE connection carrying the response of the request being served;
 * the client resumes with `Last-Event-ID` (the `test_reconnection` pattern,
 * or SSE polling). Does nothing outside an HTTP session or without an event store.
 */
export const closeRequestStream: Effect.Effect<void, never, CurrentRequest.CurrentRequest> = Effect.gen(function* () {
  const http = yield* Effect.serviceOption(CurrentHttpSession)
  if (Option.isNone(http)) return
  const request = yield* CurrentRequest.CurrentRequest
  yield* http.value.closeRequestStream(request.id)
})

/**
 * The principal of the request being served, when it came over an HTTP
 * server transport that authenticates requests; undefined otherwise (stdio,
 * or no `authentication`). `@effect-mcp/auth`'s `Principal.current` reads it.
 */
export const authenticated: Effect.Effect<Authenticated | undefined> = Effect.map(
  Effect.serviceOption(CurrentHttpSession),
  (http) => (Option.isNone(http) ? undefined : http.value.authenticated())
)
