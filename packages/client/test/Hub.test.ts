/**
 * The client's hub: the notification and progress PubSubs are made when
 * first asked for (a bounded PubSub allocates its whole ring when made), a
 * value published before then reaches nobody (as a PubSub drops what nobody
 * is subscribed to), a full ring drops its oldest values, and the client's
 * own watchers see a notification as it arrives.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as PubSub from "effect/PubSub"
import * as Scope from "effect/Scope"
import * as Hub from "../src/internal/hub.ts"

const update = (progress: number): Hub.Progress => ({ method: "tools/call", update: { progress } })

/** The hub's handler of `method`, called as the session calls it (the hub's handlers read the params only). */
const notify = (hub: Hub.Hub, method: string, params: unknown) =>
  (hub.handlers.get(method) as unknown as (params: unknown) => Effect.Effect<void>)(params)

describe("the client's hub", () => {
  it.effect("progress published before anyone asked for it reaches nobody; after, the newest are kept", () =>
    Effect.gen(function* () {
      const hub = yield* Hub.make
      hub.publishProgress(update(-1))
      const subscription = yield* PubSub.subscribe(yield* hub.progress)
      // From a plain callback, past a full ring: the oldest go, as the sliding PubSub does from an Effect.
      for (let i = 0; i < 10_000; i++) hub.publishProgress(update(i))
      const held = yield* PubSub.takeAll(subscription)
      assert.strictEqual(held.length, Hub.backlog)
      assert.strictEqual(held[0]?.update.progress, 10_000 - Hub.backlog)
      assert.strictEqual(held.at(-1)?.update.progress, 9_999)
    })
  )

  it.effect("a notification is seen by the watchers of its method first, then published", () =>
    Effect.gen(function* () {
      const hub = yield* Hub.make
      const order: Array<string> = []
      hub.watch("notifications/tools/list_changed", () => order.push("watcher"))
      // Nobody has asked for the PubSub yet: the watcher runs all the same.
      yield* notify(hub, "notifications/tools/list_changed", undefined)
      const subscription = yield* PubSub.subscribe(yield* hub.notifications)
      yield* notify(hub, "notifications/tools/list_changed", {})
      yield* notify(hub, "notifications/message", { level: "info", data: 1 })
      assert.deepStrictEqual(order, ["watcher", "watcher"])
      const held = yield* PubSub.takeAll(subscription)
      assert.deepStrictEqual(
        held.map((n) => n.method),
        ["notifications/tools/list_changed", "notifications/message"]
      )
    })
  )

  it.effect("the PubSubs are shut down with the client's scope, also one first asked for after", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const hub = yield* Hub.make.pipe(Scope.provide(scope))
      const notifications = yield* hub.notifications
      assert.strictEqual(yield* hub.notifications, notifications)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* PubSub.isShutdown(notifications))
      assert.isTrue(yield* PubSub.isShutdown(yield* hub.progress))
    })
  )
})
