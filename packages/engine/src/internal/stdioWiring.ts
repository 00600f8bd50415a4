/**
 * Small pieces both sides of the stdio transport are wired with: the
 * Transport contract's fast paths on an end, the error an exit failed with,
 * and an effect run once for every caller.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Transport from "../Transport.ts"
import type * as Outbox from "./stdioOutbox.ts"

/**
 * Gives `end` the fast paths of the Transport contract: the outbox's
 * plain-call send (`trySend`: a Peer sends a request or a response without a
 * fiber of its own) and push delivery (`attach`: frames are handed to the
 * Peer as they are decoded, with no reader fiber resumed per frame). Not
 * enumerable, like the memory transport's, so a wrapper made by spreading the
 * end (to change `send` or `incoming`) keeps neither.
 */
export const withFastPaths = <T extends Transport.TransportShape>(
  end: T,
  outbox: Outbox.Outbox,
  attach: (receiver: Transport.Receiver) => boolean
): T =>
  Object.defineProperties(end, {
    trySend: { value: (frame: Transport.Outgoing) => outbox.tryOffer(frame) },
    attach: { value: attach }
  })

/** The error an exit failed with; none for a success or an interruption. */
export const failureOf = (exit: Exit.Exit<void, Transport.TransportError>): Transport.TransportError | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined

/** Runs `effect` once; later callers wait for that run. */
export const once = (effect: Effect.Effect<void>): Effect.Effect<void> => {
  const done = Deferred.makeUnsafe<void>()
  let started = false
  return Effect.suspend(() => {
    if (started) return Deferred.await(done)
    started = true
    return Effect.ensuring(Effect.uninterruptible(effect), Deferred.succeed(done, undefined))
  })
}
