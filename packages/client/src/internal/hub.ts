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
import * as Stream from "effect/Stream"

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
  /** The PubSub every server notification is published to, made when first asked for (see `Lazy`). */
  readonly notifications: Effect.Effect<PubSub.PubSub<Notification>>
  /** Every notification from when it is run (a subscription to `notifications`). */
  readonly notificationStream: Stream.Stream<Notification>
  /** The PubSub of the progress of the client's own requests, made when first asked for. */
  readonly progress: Effect.Effect<PubSub.PubSub<Progress>>
  /** Every progress update from when it is run (a subscription to `progress`). */
  readonly progressStream: Stream.Stream<Progress>
  /** Publishes an update of a request's progress (nothing while no one has asked for progress). */
  readonly publishProgress: (progress: Progress) => void
  /**
   * Calls `f` on every notification of `method` as it arrives, before it is
   * published: the client's own bookkeeping, without a subscriber fiber.
   */
  readonly watch: (method: string, f: () => void) => void
  readonly handlers: ReadonlyMap<string, Session.NotificationHandler>
}

/**
 * The most notifications (and, apart, progress updates) held for the
 * slowest subscriber: a server that sends faster than a Stream of them is
 * read costs that many, the oldest dropped first, no more.
 */
export const backlog = 4096

/**
 * A sliding PubSub of `backlog` made when first asked for. A bounded PubSub
 * allocates its whole ring when made (two arrays of `backlog` slots, 64 KiB):
 * the two made with every client were most of a client's heap and of the
 * time to open a session (0.5 ms of 0.9 ms), for notifications most clients
 * never subscribe to. Until it exists nothing is published, which is what a
 * PubSub does with a message nobody is subscribed to.
 */
class Lazy<A> {
  private pubsub: PubSub.PubSub<A> | undefined = undefined
  private closed = false

  readonly get: Effect.Effect<PubSub.PubSub<A>> = Effect.suspend(() => {
    const made = this.pubsub
    if (made !== undefined) return Effect.succeed(made)
    return Effect.flatMap(PubSub.sliding<A>(backlog), (pubsub) => {
      // Asked for twice before the first was kept: the first one kept is the one.
      if (this.pubsub === undefined) this.pubsub = pubsub
      const kept = this.pubsub
      // Asked for after the client closed: shut down at once, as the PubSub made with it would be.
      return this.closed ? Effect.as(PubSub.shutdown(kept), kept) : Effect.succeed(kept)
    })
  })

  /** Subscribes when run (and makes the PubSub if nobody had asked for it yet). */
  readonly stream: Stream.Stream<A> = Stream.unwrap(Effect.map(this.get, Stream.fromPubSub))

  /** Publishes `value`, the oldest held dropped when the slowest subscriber has `backlog` waiting. */
  publish(value: A): Effect.Effect<void> {
    const pubsub = this.pubsub
    return pubsub === undefined ? Effect.void : Effect.asVoid(PubSub.publish(pubsub, value))
  }

  /** `publish` from a plain callback. */
  publishNow(value: A): void {
    const pubsub = this.pubsub
    // `publishUnsafe` refuses a value when the ring is full rather than sliding: that rare case slides.
    if (pubsub !== undefined && !PubSub.publishUnsafe(pubsub, value) && !PubSub.isShutdownUnsafe(pubsub)) {
      Effect.runSync(PubSub.publish(pubsub, value))
    }
  }

  readonly shutdown: Effect.Effect<void> = Effect.suspend(() => {
    this.closed = true
    const pubsub = this.pubsub
    return pubsub === undefined ? Effect.void : PubSub.shutdown(pubsub)
  })
}

export const make: Effect.Effect<Hub, never, Scope.Scope> = Effect.gen(function* () {
  const notifications = new Lazy<Notification>()
  const progress = new Lazy<Progress>()
  yield* Effect.addFinalizer(() => Effect.andThen(notifications.shutdown, progress.shutdown))
  const watchers = new Map<string, Array<() => void>>()
  const handlers = new Map<string, Session.NotificationHandler>(
    serverNotifications.map((method) => [
      method,
      (params) =>
        Effect.suspend(() => {
          const watching = watchers.get(method)
          if (watching !== undefined) for (const f of watching) f()
          return notifications.publish({ method, params })
        })
    ])
  )
  return {
    notifications: notifications.get,
    notificationStream: notifications.stream,
    progress: progress.get,
    progressStream: progress.stream,
    publishProgress: (update) => progress.publishNow(update),
    watch: (method, f) => {
      const watching = watchers.get(method)
      if (watching === undefined) watchers.set(method, [f])
      else watching.push(f)
    },
    handlers
  }
})

/** The `_meta` subscription id a 2026-07-28 notification carries, if any. */
export const subscriptionIdOf = (params: unknown): string | number | undefined => {
  if (typeof params !== "object" || params === null) return undefined
  const meta = (params as { readonly _meta?: unknown })._meta
  if (typeof meta !== "object" || meta === null) return undefined
  const id = (meta as { readonly [key: string]: unknown })[Meta.subscriptionIdKey]
  return typeof id === "string" || typeof id === "number" ? id : undefined
}
