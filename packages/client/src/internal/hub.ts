/**
 * Every notification the server sends fans out through one PubSub; the
 * client's typed Streams each subscribe and pick what they want. Progress of
 * the client's own requests gets a PubSub of its own (the Peer routes
 * progress to the pending request, never to the session's handlers).
 */
import type * as Session from "@effect-mcp/engine/Session"
import type * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as Meta from "@effect-mcp/protocol/Meta"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"

export interface Notification {
  readonly method: string
  readonly params: unknown
}

export interface Progress {
  /** The method of the request the progress is about. */
  readonly method: string
  readonly update: CurrentRequest.ProgressUpdate
}

/** Server notifications the client publishes (every revision's). */
export const serverNotifications: ReadonlyArray<string> = [
  "notifications/message",
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
  "notifications/subscriptions/acknowledged",
  "notifications/elicitation/complete",
  "notifications/tasks/status",
  // The Tasks extension (SEP-2663) on 2026-07-28.
  "notifications/tasks"
]

export interface Hub {
  readonly notifications: PubSub.PubSub<Notification>
  readonly progress: PubSub.PubSub<Progress>
  readonly handlers: ReadonlyMap<string, Session.NotificationHandler>
}

/**
 * The most notifications (and, apart, progress updates) held for the
 * slowest subscriber: a server that sends faster than a Stream of them is
 * read costs that many, the oldest dropped first, no more.
 */
export const backlog = 4096

export const make: Effect.Effect<Hub, never, Scope.Scope> = Effect.gen(function* () {
  const notifications = yield* Effect.acquireRelease(PubSub.sliding<Notification>(backlog), PubSub.shutdown)
  const progress = yield* Effect.acquireRelease(PubSub.sliding<Progress>(backlog), PubSub.shutdown)
  const handlers = new Map<string, Session.NotificationHandler>(
    serverNotifications.map((method) => [
      method,
      (params) => Effect.asVoid(PubSub.publish(notifications, { method, params }))
    ])
  )
  return { notifications, progress, handlers }
})

/** The `_meta` subscription id a 2026-07-28 notification carries, if any. */
export const subscriptionIdOf = (params: unknown): string | number | undefined => {
  if (typeof params !== "object" || params === null) return undefined
  const meta = (params as { readonly _meta?: unknown })._meta
  if (typeof meta !== "object" || meta === null) return undefined
  const id = (meta as { readonly [key: string]: unknown })[Meta.subscriptionIdKey]
  return typeof id === "string" || typeof id === "number" ? id : undefined
}
