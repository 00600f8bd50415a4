/**
 * One server's connection, supervised: connect in a scope of its own (with a
 * start timeout), report it ready with what both sides declared, list what it
 * offers (again on each `list_changed`), and watch it: the session closing
 * (a stdio server exiting, a transport lost) or repeated failed health checks
 * end the connection, its scope is closed (the child process stopped, calls
 * in flight failed) and the host connects again after the reconnect
 * schedule's next delay. When the schedule ends, the server is `Failed`
 * until `restart`. A connection that stayed up for `stableAfter` starts the
 * schedule over: a server that crashes once a day is not held to the backoff
 * of its last crash. When the host closes, the server is `Failed` for good.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import type * as Peer from "@effect-mcp/engine/Peer"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Pull from "effect/Pull"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Catalog from "../Catalog.ts"
import type * as Connector from "../Connector.ts"
import type * as McpConfig from "../McpConfig.ts"
import * as Listing from "./listing.ts"
import * as ServerStatus from "../ServerStatus.ts"
import * as Handlers from "./handlers.ts"

/** What the supervisor needs from the host. */
export interface Settings {
  readonly clientOptions: McpClient.Options
  readonly connect: Connector.Connect
  readonly handlers: Handlers.Handlers
  /** The host's start timeout (a slot may have its own). */
  readonly startTimeout: Duration.Duration
  readonly reconnect: Schedule.Schedule<unknown, ServerStatus.Failure>
  readonly stableAfter: Duration.Duration
  readonly health:
    | { readonly interval: Duration.Duration; readonly timeout: Duration.Duration; readonly failures: number }
    | undefined
  readonly concurrency: number
  /** The least time from one listing of a list after `list_changed` to the next (the host's `relistInterval`). */
  readonly relistInterval: Duration.Duration
  readonly statusChanges: PubSub.PubSub<ServerStatus.StatusChange>
  /** Called after the server's listing changed (the host rebuilds the catalog). */
  readonly onListing: Effect.Effect<void>
  /**
   * The client capabilities the host lacks that were already warned about:
   * the handlers are the host's, the same for every server, so the warning
   * is said once per host, not once per server.
   */
  readonly warnedCapabilities: Set<string>
}

/** One supervised server. */
export interface Slot {
  readonly name: string
  readonly config: McpConfig.ServerConfig
  /** How long a connection may take to be ready (the host's `startTimeout`, or this server's own). */
  readonly startTimeout: Duration.Duration
  readonly status: SubscriptionRef.SubscriptionRef<ServerStatus.ServerStatus>
  /** The connected client, while ready (or degraded but still connected). */
  client: McpClient.McpClientShape | undefined
  /** What the server offers, as last listed. */
  listing: Catalog.Listing
  /** Bounds the calls in flight on this server. */
  readonly permits: Semaphore.Semaphore
  /** Completed to end the current connection (or the wait of a failed server) and start over. */
  restart: Deferred.Deferred<void>
  /** What was already warned about for this server: `tool:<name>` for tools refused for a capability the host lacks. */
  readonly warned: Set<string>
}

type Outcome = { readonly _tag: "Lost"; readonly failure: ServerStatus.Failure } | { readonly _tag: "Restart" }

const restarted: Outcome = { _tag: "Restart" }

/** The last status of every server of a closed host: nothing connects again, and whoever waits is told so. */
const hostClosed: ServerStatus.Failed = { _tag: "Failed", failure: { message: "the host was closed" } }

export const makeSlot = (
  name: string,
  config: McpConfig.ServerConfig,
  concurrency: number,
  options: { readonly startTimeout: Duration.Duration }
): Effect.Effect<Slot> =>
  Effect.map(SubscriptionRef.make<ServerStatus.ServerStatus>({ _tag: "Connecting", attempt: 1 }), (status) => ({
    name,
    config,
    startTimeout: options.startTimeout,
    status,
    client: undefined,
    listing: Catalog.emptyListing,
    permits: Semaphore.makeUnsafe(concurrency),
    restart: Deferred.makeUnsafe<void>(),
    warned: new Set()
  }))

/**
 * Asks the supervisor of `slot` to end its connection (or the wait of a
 * failed server) and connect again. Said at once: before this returns the
 * status is `Connecting` and the client is gone, so a call made next waits
 * for the new connection, not the one being closed. A restart already asked
 * for and not yet begun takes this one too; a closed host restarts nothing.
 */
export const requestRestart = (settings: Settings, slot: Slot): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (Deferred.isDoneUnsafe(slot.restart)) return Effect.void
    return Effect.flatMap(SubscriptionRef.get(slot.status), (status) => {
      if (status === hostClosed) return Effect.void
      slot.client = undefined
      return Effect.andThen(
        setStatus(settings, slot, { _tag: "Connecting", attempt: 1 }),
        Deferred.succeed(slot.restart, undefined)
      )
    })
  })

export const setStatus = (settings: Settings, slot: Slot, status: ServerStatus.ServerStatus): Effect.Effect<void> =>
  Effect.andThen(
    SubscriptionRef.set(slot.status, status),
    PubSub.publish(settings.statusChanges, { server: slot.name, status })
  )

/**
 * The health check: the client's `ping` (`server/discover` on 2026-07-28,
 * which has no ping). An error the server answered still means it is alive.
 */
export const healthCheck = (
  client: McpClient.McpClientShape,
  timeout: Duration.Duration
): Effect.Effect<void, McpClient.CallError> =>
  Effect.catchIf(client.ping({ timeout }), McpError.isMcpError, () => Effect.void)

const expired = (exit: Exit.Exit<void, Transport.TransportError | Peer.CallError | unknown>): boolean => {
  if (Exit.isSuccess(exit)) return false
  const error = Cause.findErrorOption(exit.cause)
  return (
    error._tag === "Some" &&
    error.value instanceof Transport.TransportError &&
    StreamableHttpClient.isSessionExpired(error.value)
  )
}

const failureOfExit = (exit: Exit.Exit<void, unknown>): ServerStatus.Failure =>
  Exit.isSuccess(exit)
    ? { message: "the server closed the connection" }
    : ServerStatus.failureOf(Cause.squash(exit.cause))

/** Waits until the connection is lost: its session closed for good (an expired one the client renews is followed). */
const lost = (client: McpClient.McpClientShape, timeout: Duration.Duration): Effect.Effect<ServerStatus.Failure> =>
  Effect.gen(function* () {
    let session = client.session
    // Bounded: each round needs a new session, which needs the server to answer.
    while (true) {
      const exit = yield* session.closed
      if (!expired(exit)) return failureOfExit(exit)
      // The client starts a new session by itself; a request waits for it and tells whether it worked.
      const checked = yield* Effect.result(healthCheck(client, timeout))
      if (checked._tag === "Failure") return ServerStatus.failureOf(checked.failure)
      if (client.session === session) return { message: "the session expired and could not be renewed" }
      session = client.session
    }
  })

/** Runs the health check every `interval`; returns after `failures` failed checks in a row. */
const unhealthy = (
  settings: Settings,
  slot: Slot,
  client: McpClient.McpClientShape,
  ready: ServerStatus.Ready
): Effect.Effect<ServerStatus.Failure> => {
  const health = settings.health
  if (health === undefined) return Effect.never
  // One silence, one message: the check's own request timeout and the deadline around it are equal, and either
  // may end first.
  const noAnswer = { message: `no answer to the health check within ${Duration.format(health.timeout)}` }
  const check = Effect.timeoutOrElse(
    Effect.catchTag(healthCheck(client, health.timeout), "RequestTimeout", () => Effect.fail(noAnswer)),
    { duration: health.timeout, orElse: () => Effect.fail(noAnswer) }
  )
  return Effect.gen(function* () {
    let failures = 0
    while (true) {
      yield* Effect.sleep(health.interval)
      const checked = yield* Effect.result(check)
      if (checked._tag === "Success") {
        if (failures > 0) yield* setStatus(settings, slot, ready)
        failures = 0
        continue
      }
      const failure = ServerStatus.failureOf(checked.failure)
      if (++failures >= health.failures) return failure
      yield* setStatus(settings, slot, { _tag: "Degraded", failure, attempt: 0, retryIn: undefined })
    }
  })
}

/**
 * Lists everything, and again on each `list_changed` the server declared,
 * for as long as the connection's scope lasts. The notification streams are
 * started (and subscribed) before the first listing, and listings take turns:
 * a change made while the first listing is under way is listed after it.
 */
/** Whether two listings hold the same items and hints (plain JSON as the server sent them). */
const sameListing = (a: Catalog.Listing, b: Catalog.Listing): boolean => JSON.stringify(a) === JSON.stringify(b)

const followListing = (
  settings: Settings,
  slot: Slot,
  client: McpClient.McpClientShape,
  live: () => boolean
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const caps = client.serverCapabilities as { readonly [key: string]: { readonly listChanged?: boolean } | undefined }
    const lock = Semaphore.makeUnsafe(1)
    const relistPause = Duration.isZero(settings.relistInterval) ? Effect.void : Effect.sleep(settings.relistInterval)
    const update = (part: Effect.Effect<Partial<Catalog.Listing>>) =>
      lock.withPermit(
        Effect.flatMap(part, (listed) => {
          if (!live()) return Effect.void
          // A list listed again brings its own hints; the others keep theirs.
          const next = { ...slot.listing, ...listed, hints: { ...slot.listing.hints, ...listed.hints } }
          // The same lists again (a server announcing changes that change nothing): no new catalog to publish.
          if (sameListing(slot.listing, next)) return Effect.void
          slot.listing = next
          return settings.onListing
        })
      )
    const follow = (
      declared: boolean,
      changes: Stream.Stream<void, unknown>,
      refresh: Effect.Effect<Partial<Catalog.Listing>>
    ) =>
      Effect.gen(function* () {
        if (!declared) return
        const started = Deferred.makeUnsafe<void>()
        yield* Stream.onStart(changes, Deferred.succeed(started, undefined)).pipe(
          // Changes announced while the list is fetched again need one more fetch after it, not one each:
          // a server announcing a thousand changes at once is listed twice, not a thousand times.
          Stream.buffer({ capacity: 1, strategy: "dropping" }),
          // And a server announcing changes without end (one in a loop) is listed at most once per interval:
          // the first change is listed at once, those that follow wait out the rest of the interval together.
          Stream.runForEach(() => Effect.andThen(update(refresh), relistPause)),
          Effect.ignore,
          Effect.forkScoped
        )
        yield* Deferred.await(started)
      })
    yield* follow(
      caps.tools?.listChanged === true,
      client.toolListChanged,
      Effect.map(Listing.tools(client), (tools) => Listing.asListing({ tools }))
    )
    yield* follow(
      caps.prompts?.listChanged === true,
      client.promptListChanged,
      Effect.map(Listing.prompts(client), (prompts) => Listing.asListing({ prompts }))
    )
    yield* follow(
      caps.resources?.listChanged === true,
      client.resourceListChanged,
      Effect.map(
        Effect.all([Listing.resources(client), Listing.resourceTemplates(client)]),
        ([resources, resourceTemplates]) => Listing.asListing({ resources, resourceTemplates })
      )
    )
    // Let the streams subscribe (their start runs just before).
    yield* Effect.yieldNow
    yield* update(Listing.listAll(client))
  })

const capabilityNames = ["sampling", "elicitation", "roots"] as const

/**
 * Warns (once per host and capability) about the client capabilities the
 * host does not declare; a server that then refuses a tool for want of one
 * is warned about by the host, naming the tool.
 */
const warnMissing = (settings: Settings, slot: Slot, declared: ServerStatus.Connection): Effect.Effect<void> => {
  const missing = capabilityNames.filter(
    (name) => declared.clientCapabilities[name] === undefined && !settings.warnedCapabilities.has(name)
  )
  if (missing.length === 0) return Effect.void
  for (const name of missing) settings.warnedCapabilities.add(name)
  return Effect.logWarning(
    `this host declares no ${missing.join(", ")} capability (no handler service for it), so its servers may ` +
      `hide the tools that need it or refuse their calls (said once; first seen connecting to ${JSON.stringify(slot.name)})`
  ).pipe(Effect.annotateLogs({ server: slot.name }))
}

/**
 * Connects once, in the current scope: the transport, the client with the
 * host's handlers, then the first listing (the catalog has the server's items
 * before anyone learns it is ready), all within the start timeout (which says
 * the step it stopped at): a server that answers the handshake and then
 * nothing is not ready either.
 */
const connectOnce = (settings: Settings, slot: Slot, live: () => boolean) => {
  let step = "the transport did not open"
  return Effect.gen(function* () {
    const connected = yield* settings.connect(slot.name, slot.config)
    step = "no answer to the handshake"
    const client = yield* McpClient.make(settings.clientOptions).pipe(
      Effect.provideService(Transport.Transport, Transport.Transport.of(connected.transport)),
      Handlers.provide(settings.handlers, slot.name)
    )
    step = "no answer to the listing"
    yield* followListing(settings, slot, client, live)
    return { client, pid: connected.pid }
  }).pipe(
    Effect.timeoutOrElse({
      duration: slot.startTimeout,
      orElse: () =>
        Effect.fail({ message: `the server was not ready within ${Duration.format(slot.startTimeout)}: ${step}` })
    })
  )
}

/**
 * One connection, from connecting to its loss (or a restart). Its scope is
 * left to the caller to close (`release`): the status says what happened
 * first, as a stdio server that does not end on its stdin's end takes the
 * transport's grace to stop.
 */
const connection = (settings: Settings, slot: Slot, parent: Scope.Scope) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(parent)
    const release = Scope.close(scope, Exit.void)
    let live = true
    const connected = yield* Effect.exit(
      Scope.provide(
        connectOnce(settings, slot, () => live),
        scope
      )
    )
    if (Exit.isFailure(connected)) {
      // A listing under way when the start timed out changes nothing any more.
      live = false
      const outcome: Outcome = { _tag: "Lost", failure: failureOfExit(connected) }
      return { outcome, ready: false, uptime: 0, release }
    }
    const { client, pid } = connected.value
    // Restarted while it connected: this connection is never ready (the status says Connecting already).
    if (Deferred.isDoneUnsafe(slot.restart)) {
      live = false
      return { outcome: restarted, ready: false, uptime: 0, release }
    }
    const declared: ServerStatus.Connection = {
      revision: client.revision,
      serverInfo: client.serverInfo,
      serverCapabilities: client.serverCapabilities,
      clientCapabilities: client.session.state.declared ?? Handlers.capabilities(settings.handlers),
      instructions: client.instructions,
      pid
    }
    const ready: ServerStatus.Ready = { _tag: "Ready", connection: declared }
    const since = yield* Clock.currentTimeMillis
    // Warned before the server is ready: whoever waited for `Ready` has the warning in the log already.
    yield* warnMissing(settings, slot, declared)
    // The client is in place before the status says so: a caller woken by `Ready` finds it.
    slot.client = client
    yield* setStatus(settings, slot, ready)
    const restart = slot.restart
    const outcome: Outcome = yield* Effect.raceFirst(
      Effect.map(
        Effect.raceFirst(
          lost(client, settings.health?.timeout ?? Duration.seconds(10)),
          unhealthy(settings, slot, client, ready)
        ),
        (failure): Outcome => ({ _tag: "Lost", failure })
      ),
      Effect.as(Deferred.await(restart), restarted)
    )
    slot.client = undefined
    live = false
    // Released by the caller: calls in flight fail, a stdio server is stopped.
    return { outcome, ready: true, uptime: (yield* Clock.currentTimeMillis) - since, release }
  })

/**
 * Closes a connection's scope (`release`) in a fiber of the host's
 * `parent` scope and waits for it, interruptibly. Closing a scope cannot be
 * interrupted, and a stdio server that ignores its stdin's end and SIGTERM
 * takes both of the transport's graces to stop: waited for in the
 * supervisor itself, the host's close would wait that long before saying
 * the server `Failed` (its waiters waiting as long), and before closing the
 * other servers' connections (their calls in flight too). Forked in
 * `parent`, the host's close waits for it there, with every other
 * connection's close: nothing is left running, and each is paid once.
 */
const released = (release: Effect.Effect<void>, parent: Scope.Scope): Effect.Effect<void> =>
  Effect.flatMap(Effect.forkIn(release, parent, { startImmediately: true }), Fiber.join)

/**
 * Supervises `slot` until interrupted. Each connection's scope is forked
 * from `parent`, which the host closes after interrupting its supervisors:
 * a connection closed by the host's shutdown is not mistaken for a loss to
 * recover from. Interrupted, it leaves the server `Failed` (the host was
 * closed), without its client or items, before the connection is closed,
 * and without waiting for a connection being released (`released`): a
 * waiter (`awaitReady`, a call waiting for a connection) fails at once.
 */
export const supervise = (settings: Settings, slot: Slot, parent: Scope.Scope): Effect.Effect<never> =>
  Effect.gen(function* () {
    let step = yield* Schedule.toStep(settings.reconnect)
    // Failed attempts since the server was last ready.
    let failed = 0
    // Whether the next attempt's Connecting was said already: a slot starts as Connecting(1), and a restart says
    // it as it begins.
    let said = true
    while (true) {
      if (!said) yield* setStatus(settings, slot, { _tag: "Connecting", attempt: failed + 1 })
      said = false
      const { outcome, ready, uptime, release } = yield* connection(settings, slot, parent)
      // A restart asked for while the connection failed to start is a restart all the same.
      if (outcome._tag === "Restart" || Deferred.isDoneUnsafe(slot.restart)) {
        // `requestRestart` said Connecting before the release, which can take a stdio server's shutdown grace:
        // the status is not to say Ready (with the stopped process) meanwhile. Calls wait for the new connection.
        said = true
        yield* released(release, parent)
        slot.restart = Deferred.makeUnsafe<void>()
        step = yield* Schedule.toStep(settings.reconnect)
        failed = 0
        continue
      }
      if (ready) failed = 0
      else failed++
      if (uptime >= Duration.toMillis(settings.stableAfter)) step = yield* Schedule.toStep(settings.reconnect)
      const now = yield* Clock.currentTimeMillis
      const next = yield* step(now, outcome.failure).pipe(
        Effect.map(([, delay]) => delay),
        Pull.catchDone(() => Effect.succeed(undefined))
      )
      if (next === undefined) {
        slot.listing = Catalog.emptyListing
        yield* settings.onListing
        yield* setStatus(settings, slot, { _tag: "Failed", failure: outcome.failure })
        yield* released(release, parent)
        yield* Deferred.await(slot.restart)
        slot.restart = Deferred.makeUnsafe<void>()
        step = yield* Schedule.toStep(settings.reconnect)
        failed = 0
        said = true
        continue
      }
      yield* setStatus(settings, slot, { _tag: "Degraded", failure: outcome.failure, attempt: failed, retryIn: next })
      // The next attempt waits for the release too, so two processes of one server never overlap; the release
      // counts toward the delay.
      const restart = slot.restart
      const [, early] = yield* Effect.all(
        [
          released(release, parent),
          Effect.raceFirst(Effect.as(Effect.sleep(next), false), Effect.as(Deferred.await(restart), true))
        ],
        { concurrency: 2 }
      )
      if (early) {
        slot.restart = Deferred.makeUnsafe<void>()
        step = yield* Schedule.toStep(settings.reconnect)
        failed = 0
        said = true
      }
    }
  }).pipe(
    Effect.onInterrupt(() =>
      Effect.suspend(() => {
        slot.client = undefined
        slot.listing = Catalog.emptyListing
        return Effect.andThen(settings.onListing, setStatus(settings, slot, hostClosed))
      })
    )
  )
