/**
 * Runs a server's session factory for one HTTP session: on the server's own
 * services (never those of the request that opened the session), with the
 * session's transport and scope, interrupted when that scope closes.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Transport from "../Transport.ts"

export const start = <E, R>(options: {
  readonly factory: Effect.Effect<unknown, E, R>
  readonly server: Context.Context<unknown>
  readonly transport: Transport.TransportShape
  readonly scope: Scope.Scope
  readonly extra?: Context.Context<unknown> | undefined
  /** Runs when the factory fails: the session cannot serve. */
  readonly onFailure: Effect.Effect<void>
}): void => {
  let services = Context.merge(
    options.server,
    Context.make(Transport.Transport, options.transport).pipe(Context.add(Scope.Scope, options.scope))
  )
  if (options.extra !== undefined) services = Context.merge(services, options.extra)
  const fiber = Effect.runForkWith(services as Context.Context<R>)(
    options.factory.pipe(
      Effect.catchCause((cause) =>
        Effect.andThen(Effect.logError("MCP session failed to start", cause), options.onFailure)
      )
    )
  )
  Fiber.runIn(fiber, options.scope)
}
