/**
 * Runs a server's session factory for one HTTP session: on the server's own
 * services (never those of the request that opened the session), with the
 * session's transport and scope, interrupted when that scope closes.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Transport from "@effect-mcp/engine/Transport"

export const start = <E, R>(options: {
  readonly factory: Effect.Effect<unknown, E, R>
  readonly server: Context.Context<unknown>
  readonly transport: Transport.TransportShape
  readonly scope: Scope.Scope
  /** Adds the transport's own services. */
  readonly extend?: ((services: Context.Context<unknown>) => Context.Context<unknown>) | undefined
  /** Runs when the factory fails: the session cannot serve. */
  readonly onFailure: Effect.Effect<void>
}): void => {
  // Added on top of the server's services rather than merged into a copy of
  // them: a session keeps its context for life, and a copy of the server's
  // service map costs every idle session its size.
  let services = Context.add(
    Context.add(options.server, Transport.Transport, options.transport),
    Scope.Scope,
    options.scope
  )
  if (options.extend !== undefined) services = options.extend(services)
  const fiber = Effect.runForkWith(services as Context.Context<R>)(
    options.factory.pipe(
      Effect.catchCause((cause) =>
        Effect.andThen(Effect.logError("MCP session failed to start", cause), options.onFailure)
      )
    )
  )
  Fiber.runIn(fiber, options.scope)
}
