/**
 * The session the client talks through, started over when the server ends
 * it. A Streamable HTTP server that forgot the session answers 404; the spec
 * says the client MUST then start a new session with a new `initialize`
 * without a session id. The transport reports it (`incoming` fails with a
 * cause tagged `SessionExpired`) and offers `renew`: the old session is
 * closed, the transport renewed, and a new session negotiated in the same
 * revision. Calls that were in flight fail with `SessionExpired`; calls made
 * while the new session is being negotiated wait for it.
 *
 * A server that ends every new session at once (one that answers its event
 * stream's GET with 404, say) would have the client negotiate again as fast
 * as the two can go: after a session that lived less than `quickLife`, the
 * next one starts after `quickWait`, doubling with each such session in a
 * row, at most `maxQuickWait`. A session that lived longer starts the next
 * at once, as a server restart asks.
 *
 * The same transports answer a request whose POST failed (the server is
 * unreachable) on the server's behalf; that answer carries the transport's
 * error, which the caller gets instead of an `InternalError` it would mistake
 * for the server's own -32603.
 *
 * Over transports without `renew` (stdio, in memory) the session is used as
 * it is: nothing is added to their calls.
 */
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import type * as Peer from "@effect-mcp/engine/Peer"
import type * as PeerError from "@effect-mcp/engine/PeerError"
import type * as Session from "@effect-mcp/engine/Session"
import type * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

const quickLife = 1_000
const quickWait = 250
const maxQuickWait = 5_000

/** The wait before the next session after `quick` sessions in a row that each lived less than `quickLife`. */
export const renewalDelay = (quick: number): Duration.Duration =>
  quick === 0 ? Duration.zero : Duration.millis(Math.min(maxQuickWait, quickWait * 2 ** (quick - 1)))

/** What a call through the connection can fail with. */
export type CallError = Peer.CallError | PeerError.NotSupported | StreamableHttpClient.SessionExpired

const causeOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null ? (error as { readonly cause?: unknown }).cause : undefined

const tagOf = (value: unknown): unknown =>
  typeof value === "object" && value !== null ? (value as { readonly _tag?: unknown })._tag : undefined

/** The `SessionExpired` behind a closed session or a refused send, if that is why it failed. */
const expiredIn = (error: unknown): StreamableHttpClient.SessionExpired | undefined => {
  let inner = error
  if (tagOf(inner) === "SessionClosed") inner = causeOf(inner)
  // A keepalive ping the server refused for an expired session: the session expired. The ping is a plain Peer
  // request, so what failed it is the answer the transport made on the server's behalf, its error inside.
  if (tagOf(inner) === "KeepaliveFailed") inner = causeOf(inner)
  inner = transportFailureIn(inner) ?? inner
  if (tagOf(inner) === "TransportError") inner = causeOf(inner)
  return tagOf(inner) === "SessionExpired" ? (inner as StreamableHttpClient.SessionExpired) : undefined
}

/** The transport's own error inside an answer it made for a request it could not deliver. */
const transportFailureIn = (error: unknown): Transport.TransportError | undefined => {
  if (tagOf(error) !== "InternalError") return undefined
  const data = (error as { readonly data?: unknown }).data
  const inner =
    typeof data === "object" && data !== null
      ? (data as { readonly transportError?: unknown }).transportError
      : undefined
  // An instance: JSON from the server cannot make one.
  return inner instanceof Transport.TransportError ? inner : undefined
}

/** A closed session's exit, when it closed because the server ended the session. */
const expiredExit = (exit: Exit.Exit<void, unknown>): boolean => {
  if (Exit.isSuccess(exit)) return false
  const error = Cause.findErrorOption(exit.cause)
  return error._tag === "Some" && expiredIn(error.value) !== undefined
}

/** The client's way to the server: the current session, and requests and notifications through it. */
export interface Connection {
  /** The session requests go through now (a new one after the server ended the previous one). */
  readonly current: () => Session.SessionShape
  readonly request: (
    method: string,
    params?: object | undefined,
    options?: Peer.CallOptions
  ) => Effect.Effect<unknown, CallError>
  readonly notify: (
    method: string,
    params?: object | undefined
  ) => Effect.Effect<void, Transport.TransportError | PeerError.NotSupported | StreamableHttpClient.SessionExpired>
  /**
   * Registers what to redo on every new session (resubscribing, say); it
   * runs in a fiber of its own once the new session is in place.
   */
  readonly onRenewal: (redo: Effect.Effect<void>) => void
  /** Completes when the connection is over: a session closed for another reason than its expiry (renewed). */
  readonly ended: Effect.Effect<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>>
}

/** Connects over the current transport (negotiating the revision); the connection lasts as long as the scope. */
export const make = Effect.fnUntraced(function* (options: ClientSession.Options) {
  const transport = yield* Transport.Transport
  const parent = yield* Scope.Scope
  const first = yield* ClientSession.make(options)
  const renew = transport.renew
  // The revision is kept across renewals (a stateless one has no session to renew): everything the
  // client derived from it stays true.
  const revision = first.state.revision!
  if (renew === undefined) {
    const direct: Connection = {
      current: () => first,
      request: (method, params, callOptions) => first.request(method, params, callOptions),
      notify: (method, params) => first.notify(method, params),
      onRenewal: () => {},
      ended: first.closed
    }
    return direct
  }

  const again: ClientSession.Options = {
    ...options,
    supportedVersions: [revision.version as ProtocolVersion.ProtocolVersion]
  }
  // The renewal runs in a fiber of its own, with the services the client was made with.
  const context = yield* Effect.context<Transport.Transport>()
  let current: Session.SessionShape = first
  let currentScope: Scope.Closeable | undefined
  // When the current session started, and how many sessions in a row lived less than `quickLife`.
  let startedAt = yield* Clock.currentTimeMillis
  let quick = 0
  // Set while a new session is negotiated; calls wait for it.
  let renewing: Deferred.Deferred<void> | undefined
  const redos: Array<Effect.Effect<void>> = []

  // Completed when the connection is over: a session closed for another reason than its expiry, or no new
  // session could be made in place of an expired one (a later call still tries again).
  const ended = Deferred.makeUnsafe<Exit.Exit<void, Transport.TransportError | PeerError.KeepaliveFailed>>()

  /** Starts a new session in place of `expired`, unless that is done or under way. */
  const start = (expired: Session.SessionShape): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (current !== expired || renewing !== undefined) return Effect.void
      const done = Deferred.makeUnsafe<void>()
      renewing = done
      const next = Effect.gen(function* () {
        if (currentScope !== undefined) yield* Scope.close(currentScope, Exit.void)
        quick = (yield* Clock.currentTimeMillis) - startedAt < quickLife ? quick + 1 : 0
        yield* Effect.sleep(renewalDelay(quick))
        yield* renew
        const scope = yield* Scope.fork(parent)
        const session = yield* ClientSession.make(again).pipe(
          Effect.provideService(Scope.Scope, scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        current = session
        currentScope = scope
        startedAt = yield* Clock.currentTimeMillis
        yield* watch(session)
        // After `renewing` is cleared (below): what is redone goes through the new session, not waiting for it.
        return true
      }).pipe(
        // A failed renewal leaves the expired session: the next call fails as expired and tries again. For who
        // only listens (no call comes), the connection is over: `ended` says why.
        Effect.catch((error) =>
          Effect.as(
            Deferred.succeed(
              ended,
              Exit.fail(
                new Transport.TransportError({
                  reason: "Closed",
                  message: `the server ended the session, and a new one could not be made: ${error.message}`,
                  cause: error
                })
              )
            ),
            false
          )
        ),
        Effect.ensuring(
          Effect.sync(() => {
            renewing = undefined
            Deferred.doneUnsafe(done, Exit.void)
          })
        ),
        Effect.tap((renewed) =>
          renewed && redos.length > 0
            ? Effect.forkIn(Effect.all(redos, { concurrency: "unbounded", discard: true }), parent)
            : Effect.void
        ),
        Effect.provideContext(context)
      )
      return Effect.asVoid(Effect.forkIn(next, parent))
    })

  // The session starts over as soon as it closes for that reason, before anyone calls; for any other, the
  // connection is over.
  const watch = (session: Session.SessionShape) =>
    session.closed.pipe(
      Effect.flatMap((exit) => (expiredExit(exit) ? start(session) : Effect.asVoid(Deferred.succeed(ended, exit)))),
      Effect.forkIn(parent),
      Effect.asVoid
    )
  yield* watch(first)

  type Failure<E> = E | Transport.TransportError | StreamableHttpClient.SessionExpired

  /**
   * Runs `f` on the current session, after the renewal under way if there is
   * one. A call the server never took (its POST was refused with 404, or the
   * send was refused once the session had expired) is sent again, once, on
   * the new session; one that was in flight fails with `SessionExpired`.
   */
  const through = <A, E>(
    f: (session: Session.SessionShape) => Effect.Effect<A, E>,
    retry = true
  ): Effect.Effect<A, Failure<E>> =>
    Effect.suspend(() => {
      const run = () => {
        const session = current
        return Effect.catch(f(session), (error): Effect.Effect<A, Failure<E>> => {
          const failure = transportFailureIn(error) ?? error
          const expired = expiredIn(failure)
          if (expired === undefined) return Effect.fail(failure)
          if (retry && tagOf(failure) === "TransportError") return Effect.andThen(start(session), through(f, false))
          return Effect.andThen(start(session), Effect.fail(expired))
        })
      }
      return renewing === undefined ? run() : Effect.andThen(Deferred.await(renewing), Effect.suspend(run))
    })

  const renewed: Connection = {
    current: () => current,
    request: (method, params, callOptions) => through((s) => s.request(method, params, callOptions)),
    notify: (method, params) => through((s) => s.notify(method, params)),
    onRenewal: (redo) => {
      redos.push(redo)
    },
    ended: Deferred.await(ended)
  }
  return renewed
})
