/**
 * Registering items from inside Effects and Layers: each group is added at
 * once (one `list_changed` per group, not per item) with the context of the
 * code that registered it (what its handlers need), and removed when the
 * registering scope closes.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Scope from "effect/Scope"
import { type Kind, McpServer } from "../McpServer.ts"

export const register = <R>(
  kind: Kind,
  items: ReadonlyArray<unknown>
): Effect.Effect<void, never, McpServer | R | Scope.Scope> =>
  Effect.gen(function* () {
    const server = yield* McpServer
    // The request scope installs its own loggers (the MCP log bridge); the registrant's must not shadow them.
    const context = Context.omit(Logger.CurrentLoggers)(yield* Effect.context<R>()) as Context.Context<never>
    yield* server.register(kind, items, context)
  })

export const layer = <R>(kind: Kind, items: ReadonlyArray<unknown>): Layer.Layer<never, never, McpServer | R> =>
  Layer.effectDiscard(register<R>(kind, items))
