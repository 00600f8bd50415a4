/**
 * Who a verified access token speaks for. A handler of a server protected
 * with `HttpProtection` reads its caller with {@link current} (the principal
 * of the session's latest request, or of the stateless request), and an
 * operation that needs scopes beyond those the server checked before dispatch
 * asks for them with {@link requireCurrentScopes}. The {@link Principal}
 * service is the same caller for code that takes it from its context.
 */
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { InsufficientScope, MissingToken } from "./AuthError.ts"

/** The verified caller: what the token's claims (or its introspection) say. */
export interface PrincipalShape {
  /** The token's `sub`: the resource owner, or the client itself for a client credentials grant. */
  readonly subject: string
  /** The client the token was issued to (`client_id`, else `azp`), when the token says. */
  readonly clientId: string | undefined
  /** The token's issuer (`iss`), when the token says. */
  readonly issuer: string | undefined
  /** The scopes granted (`scope`, space-separated, or `scp`). */
  readonly scopes: ReadonlyArray<string>
  /** The resources the token is for (`aud`); the verifier checked that this resource is among them. */
  readonly audience: ReadonlyArray<string>
  /** When the token expires, in milliseconds since the epoch, when it says. */
  readonly expiresAt: number | undefined
  /** Every claim of the token (or field of its introspection response). */
  readonly claims: Readonly<Record<string, unknown>>
}

/** The caller of the request being served; provided by the bearer layer of a protected server. */
export class Principal extends Context.Service<Principal, PrincipalShape>()("@effect-mcp/auth/Principal") {}

/** The scopes of `required` that `principal` was not granted, in the order of `required`. */
export const missingScopes = (principal: PrincipalShape, required: Iterable<string>): ReadonlyArray<string> => {
  const missing: Array<string> = []
  for (const scope of required) {
    if (!principal.scopes.includes(scope) && !missing.includes(scope)) missing.push(scope)
  }
  return missing
}

/** Whether `principal` was granted every scope of `required`. */
export const hasScopes = (principal: PrincipalShape, required: Iterable<string>): boolean =>
  missingScopes(principal, required).length === 0

/**
 * Checks that `principal` was granted every scope of `required`; fails with
 * {@link InsufficientScope} naming all the needed scopes (the client asks for
 * them together in its step-up) and the missing ones.
 */
export const checkScopes = (
  principal: PrincipalShape,
  required: ReadonlyArray<string>
): Effect.Effect<PrincipalShape, InsufficientScope> => {
  const missing = missingScopes(principal, required)
  return missing.length === 0
    ? Effect.succeed(principal)
    : Effect.fail(new InsufficientScope({ required: [...new Set(required)], missing: [...missing] }))
}

/**
 * The caller of the request being served, once it is known to hold every
 * scope of `required`; fails with {@link InsufficientScope} otherwise.
 *
 * @example
 * ```ts
 * import * as Principal from "@effect-mcp/auth/Principal"
 * import * as Effect from "effect/Effect"
 *
 * const handler = Effect.gen(function* () {
 *   const caller = yield* Principal.requireScopes("notes:write")
 *   return `written for ${caller.subject}`
 * })
 * ```
 */
export const requireScopes = (
  ...required: ReadonlyArray<string>
): Effect.Effect<PrincipalShape, InsufficientScope, Principal> =>
  Effect.flatMap(Principal, (principal) => checkScopes(principal, required))

const isPrincipal = (value: unknown): value is PrincipalShape =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as PrincipalShape).subject === "string" &&
  Array.isArray((value as PrincipalShape).scopes)

/**
 * The caller of the request being served by an HTTP server protected with
 * `HttpProtection` (Streamable HTTP or legacy SSE), read from the request
 * (`CurrentRequest.principal`, which its transport answers); `None` over stdio, on an unprotected server, or
 * outside a request. In a stateful session it is the principal of the
 * session's latest request: always the same owner (a session is bound to
 * it), with the scopes of its latest token.
 */
export const currentOption: Effect.Effect<Option.Option<PrincipalShape>> = Effect.map(
  CurrentRequest.principal,
  (authenticated) =>
    authenticated !== undefined && isPrincipal(authenticated.value) ? Option.some(authenticated.value) : Option.none()
)

/**
 * The caller of the request being served (see {@link currentOption}); fails
 * with {@link MissingToken} when the request was not authenticated.
 *
 * @example
 * ```ts
 * import * as Principal from "@effect-mcp/auth/Principal"
 * import * as Tool from "@effect-mcp/server/Tool"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 *
 * export const WhoAmI = Tool.make("whoami", {
 *   input: Schema.Struct({}),
 *   handler: () => Effect.map(Principal.current, (caller) => `you are ${caller.subject} via ${caller.clientId}`)
 * })
 * ```
 */
export const current: Effect.Effect<PrincipalShape, MissingToken> = Effect.flatMap(currentOption, (principal) =>
  Option.isSome(principal) ? Effect.succeed(principal.value) : Effect.fail(new MissingToken())
)

/**
 * The caller of the request being served, once it is known to hold every
 * scope of `required` (a check inside a handler, for a scope that depends on
 * the arguments; the item's own `scopes` are checked before dispatch).
 */
export const requireCurrentScopes = (
  ...required: ReadonlyArray<string>
): Effect.Effect<PrincipalShape, MissingToken | InsufficientScope> =>
  Effect.flatMap(current, (principal) => checkScopes(principal, required))
