/**
 * A server's broadcasts (list changes, resource updates, task statuses, its
 * log): every send started at once and none waited for, with a bound on what
 * one recipient that does not read may hold.
 */
import * as Effect from "effect/Effect"

/** A broadcast's send: to whom (a session's entry, a listen stream), and the send. */
export type Send = readonly [recipient: object, send: Effect.Effect<void>]

/**
 * Broadcast sends that may wait on one recipient whose transport does not
 * take them (a client that stopped reading): past it, its next ones are
 * dropped, or the server's memory would grow with each broadcast (a fiber and
 * a write deadline per send) until the transport's write timeout ends it.
 */
const maxBacklog = 1024
const backlogs = new WeakMap<object, number>()
const warned = new WeakSet<object>()

/**
 * Starts every send of a broadcast and waits for none: each runs in a fiber of
 * its own that goes as far as it can at once (a session whose transport takes
 * the message now has it before the broadcaster continues, in order), so one
 * peer that does not read holds up neither the others nor the broadcaster,
 * and holds at most `maxBacklog` of its sends.
 */
export const broadcast = (sends: ReadonlyArray<Send>): Effect.Effect<void> =>
  sends.length === 0
    ? Effect.void
    : Effect.withFiber((fiber) => {
        const fork = Effect.runForkWith(fiber.context)
        for (let i = 0; i < sends.length; i++) {
          const [recipient, send] = sends[i]!
          const waiting = backlogs.get(recipient) ?? 0
          if (waiting >= maxBacklog) {
            if (!warned.has(recipient)) {
              warned.add(recipient)
              fork(
                Effect.logWarning(
                  `a client is not reading its notifications: past ${maxBacklog} waiting, the server's broadcasts to it are dropped`
                )
              )
            }
            continue
          }
          backlogs.set(recipient, waiting + 1)
          fork(
            Effect.ensuring(
              send,
              Effect.sync(() => backlogs.set(recipient, (backlogs.get(recipient) ?? 1) - 1))
            )
          )
        }
        return Effect.void
      })
