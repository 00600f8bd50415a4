/**
 * Following server-side changes as Streams.
 *
 * Stateful revisions: `resources/subscribe` when the first stream for a URI
 * starts, `resources/unsubscribe` when the last one ends; updates arrive as
 * session-wide notifications.
 *
 * 2026-07-28: one `subscriptions/listen` request per stream, naming what it
 * wants; the server acknowledges it (`notifications/subscriptions/acknowledged`)
 * and tags every notification of the subscription with its id (the listen
 * request's id). Ending the stream interrupts the request, which sends
 * `notifications/cancelled` and so ends the subscription on the server. The
 * server ends it with a result, whose `resultType` is checked as any other
 * answer's is: an unrecognized one fails the stream with `InvalidResult`.
 *
 * The Peer does not tell which id it gave a request, so listens are opened
 * one at a time: the first acknowledgement with an id not yet claimed belongs
 * to the listen being opened.
 */
import type * as Resources from "@effect-mcp/protocol/Resources"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { type InvalidResult, SubscriptionError } from "../ClientError.ts"
import type * as Connection from "./connection.ts"
import * as Hub from "./hub.ts"
import * as ResultType from "./resultType.ts"

type RequestError = Connection.CallError | SubscriptionError | InvalidResult

export interface Subscriptions {
  /** Session-wide notifications of the given methods (stateful revisions). */
  readonly notifications: (methods: ReadonlySet<string>) => Stream.Stream<Hub.Notification>
  /**
   * Updates of one resource, subscribed for as long as the scope lasts (stateful revisions): once the server
   * answered `resources/subscribe` (failing with its refusal), unsubscribed with the scope.
   */
  readonly resource: (uri: string) => Effect.Effect<Stream.Stream<Hub.Notification>, RequestError, Scope.Scope>
  /**
   * A `subscriptions/listen` of the given methods for as long as the scope lasts (2026-07-28): once the server
   * acknowledged it (failing with its refusal); the Stream ends or fails as the listen request does.
   */
  readonly listenScoped: (
    filter: Resources.SubscriptionFilter,
    methods: ReadonlySet<string>
  ) => Effect.Effect<Stream.Stream<Hub.Notification, RequestError>, RequestError, Scope.Scope>
  /** A `subscriptions/listen` stream of the given methods (2026-07-28). */
  readonly listen: (
    filter: Resources.SubscriptionFilter,
    methods: ReadonlySet<string>
  ) => Stream.Stream<Hub.Notification, RequestError>
}

/** Whether an update for `updated` concerns a subscription to `uri` (it may name a sub-resource). */
export const concerns = (uri: string, updated: string): boolean => updated === uri || updated.startsWith(uri)

const uriOf = (params: unknown): string | undefined => {
  const uri = (params as { readonly uri?: unknown } | undefined)?.uri
  return typeof uri === "string" ? uri : undefined
}

export const make = (
  session: Pick<Connection.Connection, "request" | "onRenewal">,
  hub: Hub.Hub,
  ackTimeout: Duration.Input
): Subscriptions => {
  const counts = new Map<string, number>()
  const subscribeLock = Semaphore.makeUnsafe(1)
  const listenLock = Semaphore.makeUnsafe(1)
  const claimed = new Set<string | number>()

  const notifications = (methods: ReadonlySet<string>) =>
    Stream.filter(hub.notificationStream, (n) => methods.has(n.method))

  const acquire = (uri: string) =>
    subscribeLock.withPermit(
      Effect.suspend(() => {
        const count = counts.get(uri) ?? 0
        if (count > 0) return Effect.sync(() => counts.set(uri, count + 1))
        return Effect.tap(
          session.request("resources/subscribe", { uri }),
          Effect.sync(() => counts.set(uri, 1))
        )
      })
    )

  const release = (uri: string) =>
    subscribeLock.withPermit(
      Effect.suspend(() => {
        const count = counts.get(uri) ?? 0
        if (count > 1) return Effect.sync(() => counts.set(uri, count - 1))
        counts.delete(uri)
        return Effect.ignore(session.request("resources/unsubscribe", { uri }))
      })
    )

  // A new session knows none of the old one's subscriptions: each URI still followed is subscribed again.
  session.onRenewal(
    subscribeLock.withPermit(
      Effect.suspend(() =>
        Effect.forEach([...counts.keys()], (uri) => Effect.ignore(session.request("resources/subscribe", { uri })), {
          discard: true
        })
      )
    )
  )

  // Made once per client (a generator function made per call costs its own generator prototype and map).
  const resource = Effect.fnUntraced(function* (uri: string) {
    // Subscribe to the hub before the server is asked, so no early update is missed.
    const subscription = yield* PubSub.subscribe(yield* hub.notifications)
    yield* Effect.acquireRelease(acquire(uri), () => release(uri))
    return Stream.fromSubscription(subscription).pipe(
      Stream.filter((n) => {
        const updated = n.method === "notifications/resources/updated" ? uriOf(n.params) : undefined
        return updated !== undefined && concerns(uri, updated)
      })
    )
  })

  const listenScoped = Effect.fnUntraced(function* (
    filter: Resources.SubscriptionFilter,
    methods: ReadonlySet<string>
  ) {
    const subscription = yield* PubSub.subscribe(yield* hub.notifications)
    const opened = yield* listenLock.withPermit(
      Effect.gen(function* () {
        // The result that ends the listen is checked as the request path checks every other answer.
        const request = yield* session
          .request("subscriptions/listen", { notifications: filter }, { timeout: Duration.infinity })
          .pipe(
            Effect.flatMap((result) => ResultType.check("subscriptions/listen", result)),
            Effect.forkScoped
          )
        const ack = Effect.gen(function* () {
          while (true) {
            const n = yield* PubSub.take(subscription)
            if (n.method !== "notifications/subscriptions/acknowledged") continue
            const id = Hub.subscriptionIdOf(n.params)
            if (id === undefined || claimed.has(id)) continue
            claimed.add(id)
            return id
          }
        }).pipe(Effect.timeoutOption(ackTimeout))
        // The request may end (refused, or closed at once) before any acknowledgement.
        const outcome = yield* Effect.raceFirst(
          Effect.map(ack, (id) => ({ _tag: "Acknowledged" as const, id })),
          Effect.map(Fiber.await(request), (exit) => ({ _tag: "Ended" as const, exit }))
        )
        return { request, outcome }
      })
    )
    const { request, outcome } = opened
    if (outcome._tag === "Ended") {
      if (Exit.isFailure(outcome.exit)) return yield* Effect.failCause(outcome.exit.cause)
      return Stream.empty
    }
    if (outcome.id._tag === "None") {
      yield* Fiber.interrupt(request)
      return yield* new SubscriptionError({
        reason: "NotAcknowledged",
        message: `subscriptions/listen: no acknowledgement within ${Duration.format(Duration.fromInputUnsafe(ackTimeout))}`
      })
    }
    const id = outcome.id.value
    yield* Effect.addFinalizer(() => Effect.sync(() => claimed.delete(id)))
    // Bounded as the hub is: a listener read slower than its notifications come keeps the newest.
    const queue = yield* Queue.sliding<Hub.Notification, RequestError | Cause.Done>(Hub.backlog)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(PubSub.take(subscription), (n) =>
          methods.has(n.method) && Hub.subscriptionIdOf(n.params) === id ? Queue.offer(queue, n) : Effect.void
        )
      )
    )
    yield* Effect.forkScoped(
      Effect.flatMap(Fiber.await(request), (exit) =>
        Exit.isFailure(exit) ? Queue.failCause(queue, exit.cause) : Queue.end(queue)
      )
    )
    return Stream.fromQueue(queue)
  })

  const listen = (filter: Resources.SubscriptionFilter, methods: ReadonlySet<string>) =>
    Stream.unwrap(listenScoped(filter, methods))

  return { notifications, resource, listenScoped, listen }
}
