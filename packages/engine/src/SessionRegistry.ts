/**
 * The sessions one server holds, by id, whatever carries them: admission
 * (a global limit and a quota per client), finding a session for a request
 * (bound to its principal: another principal's session is unknown), closing
 * one for a reason, idle expiry and the watch for stalled connections on the
 * Clock, and each session's snapshot with its change stream. Every transport
 * that keeps sessions (Streamable HTTP, legacy HTTP+SSE) is an adapter over
 * one of these; nothing of it is written per transport.
 *
 * The transport's own per-session object is registered as it is (`Held`):
 * the registry adds no object per session, as a server keeps many idle ones.
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Session from "./Session.ts"
import type * as Transport from "./Transport.ts"
import * as SessionSnapshot from "./SessionSnapshot.ts"

/**
 * Why a session closed: its client deleted it (or its connection ended), it
 * sat idle past the timeout, its keeper let it go to continue elsewhere, or
 * the server ended.
 */
export type CloseReason = "Deleted" | "Expired" | "Released" | "Shutdown"

/** A change of a session: its new snapshot (`Saved`), or that it closed and why (`Closed`). */
export type SessionChange =
  | { readonly _tag: "Saved"; readonly sessionId: string; readonly snapshot: SessionSnapshot.SessionSnapshot }
  | { readonly _tag: "Closed"; readonly sessionId: string; readonly reason: CloseReason }

/** What the registry asks of a transport's session. */
export interface Held {
  /** Whom the session counts against for the per-client quota (the principal's owner when authenticated). */
  readonly client: string | undefined
  /** The owner of the principal it is bound to (`Authenticated.owner`), when the server authenticates. */
  readonly owner: string | undefined
  /** Whether it serves something now: idle expiry waits until it does not. */
  isBusy(): boolean
  /** Milliseconds without activity at `now` (Clock time). */
  idleFor(now: number): number
  /**
   * Closes its connections whose reader took nothing for the write timeout
   * while messages waited, and sends a keepalive on the others when
   * `keepalive`; how many it closed.
   */
  watch(keepalive: boolean): Effect.Effect<number>
  /**
   * Optional, for a transport whose session is its one connection (legacy
   * SSE): whether that connection stalled (its reader took nothing for the
   * write timeout while messages waited). The registry then closes the
   * session, counted with the stalled connections, instead of `watch`ing it.
   */
  readonly stalled?: (() => boolean) | undefined
  /** Ends the session: its transport and the MCP session over it. */
  end(reason: CloseReason): Effect.Effect<void>
  /**
   * The MCP session over it once it started, set by the registry (a field of
   * the held session rather than an entry in a table of the registry's: a
   * server keeps many idle sessions). Declare it, initialized to undefined.
   */
  core?: Session.SessionShape | undefined
}

/** Why a new session is refused. */
export type Refusal =
  /** The registry holds `maxSessions`. */
  | { readonly _tag: "Full" }
  /** The client holds `maxSessionsPerClient`. */
  | { readonly _tag: "OverQuota"; readonly limit: number }

/** The registry's limits and timers. */
export interface Options {
  /** Sessions held at once. */
  readonly maxSessions: number
  /** Sessions one client (or principal) holds at once. */
  readonly maxSessionsPerClient: number
  /** A session idle this long (and not busy) is closed as `Expired`; infinite for none. */
  readonly idleTimeout: Duration.Input
  /** How often sessions are watched for stalled connections; undefined for never. */
  readonly watchEvery?: Duration.Input | undefined
  /** How often watched connections get a keepalive (at most as often as they are watched). Default: never. */
  readonly keepaliveEvery?: Duration.Input | undefined
  /** Told how many connections each watch closed, when any. */
  readonly onStalled?: ((closed: number) => Effect.Effect<void>) | undefined
  /** Told when the number of sessions changes by `delta`. */
  readonly onCount?: ((delta: 1 | -1) => void) | undefined
}

/**
 * The sessions whose snapshot changed and nobody read yet, each once (the
 * next read sees the latest state): bounded by the number of sessions.
 */
class Changes {
  readonly pending = new Map<string, CloseReason | "Changed">()
  readonly ids: Queue.Queue<string>

  constructor(ids: Queue.Queue<string>) {
    this.ids = ids
  }

  mark(id: string, what: CloseReason | "Changed"): void {
    const queued = this.pending.has(id)
    // A close stays a close.
    if (!queued || what !== "Changed") this.pending.set(id, what)
    if (!queued) Queue.offerUnsafe(this.ids, id)
  }
}

const millis = (input: Duration.Input | undefined): number =>
  input === undefined ? Number.POSITIVE_INFINITY : Duration.toMillis(Duration.fromInputUnsafe(input))

/** The sessions of one server (see the module's documentation). */
export class SessionRegistry<H extends Held> {
  private readonly table = new Map<string, H>()
  // Sessions open per client; a client without any is not kept.
  private readonly perClient = new Map<string, number>()
  /** Set while someone reads the changes: until then none are kept. */
  private changes: Changes | undefined = undefined
  private readonly options: Options
  private readonly idleMs: number
  private readonly clock: Clock.Clock

  /** When the last keepalive went out (or the registry was made). */
  private keepaliveAt: number

  constructor(options: Options, clock: Clock.Clock) {
    this.options = options
    this.idleMs = millis(options.idleTimeout)
    this.clock = clock
    this.keepaliveAt = clock.currentTimeMillisUnsafe()
  }

  /** Sessions held now. */
  get size(): number {
    return this.table.size
  }

  /** Whether a session of this id is held. */
  has(id: string): boolean {
    return this.table.has(id)
  }

  /** Why a new session of `client` would be refused now, or undefined when it would be admitted. */
  admit(client: string | undefined): Refusal | undefined {
    if (this.table.size >= this.options.maxSessions) return { _tag: "Full" }
    const limit = this.options.maxSessionsPerClient
    if (client !== undefined && (this.perClient.get(client) ?? 0) >= limit) return { _tag: "OverQuota", limit }
    return undefined
  }

  /** Holds `held` under `id` (admitted before; an id in use is the caller's to avoid). */
  add(id: string, held: H): void {
    this.table.set(id, held)
    this.options.onCount?.(1)
    const client = held.client
    if (client !== undefined) this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1)
  }

  /**
   * The session `id` names, for a request of `principal` (undefined when the
   * server does not authenticate): a session bound to another principal is
   * not found, so nothing says it exists.
   */
  find(id: string, principal?: string | undefined): H | undefined {
    const held = this.table.get(id)
    if (held === undefined) return undefined
    if (principal !== undefined && held.owner !== principal) return undefined
    return held
  }

  /**
   * Whether a session of `snapshot` may be reopened for `principal`: one bound
   * to a principal only for it, and not one idle for the idle timeout since
   * its snapshot's `activeAt` (it expired wherever it was: moving it does not
   * restart its idle clock).
   */
  mayRestore(snapshot: SessionSnapshot.SessionSnapshot, principal: string | undefined): boolean {
    if (snapshot.principal !== undefined && snapshot.principal !== principal) return false
    const activeAt = snapshot.activeAt
    return activeAt === undefined || this.clock.currentTimeMillisUnsafe() - activeAt < this.idleMs
  }

  /** Closes session `id` for `reason`; false when it is not held. */
  close(id: string, reason: CloseReason): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      const held = this.table.get(id)
      return held === undefined ? Effect.succeed(false) : Effect.as(this.closeHeld(id, held, reason), true)
    })
  }

  /** Closes `held`, held under `id` (or already let go: then it is only ended). */
  closeHeld(id: string, held: H, reason: CloseReason): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.table.get(id) === held) {
        this.table.delete(id)
        this.options.onCount?.(-1)
        const client = held.client
        if (client !== undefined) {
          const left = (this.perClient.get(client) ?? 1) - 1
          if (left > 0) this.perClient.set(client, left)
          else this.perClient.delete(client)
        }
        const core = held.core
        if (core !== undefined) core.state.onChange = undefined
        held.core = undefined
        this.changes?.mark(id, reason)
      }
      return held.end(reason)
    })
  }

  /** Closes every session (the server ends). */
  get closeAll(): Effect.Effect<void> {
    return Effect.suspend(() =>
      Effect.forEach([...this.table], ([id, held]) => this.closeHeld(id, held, "Shutdown"), { discard: true })
    )
  }

  // ---- snapshots -----------------------------------------------------------------

  /**
   * What a transport gives its session factory as `Session.OnSessionStart`
   * (once, for all its sessions): the MCP session made over a held session's
   * transport (named by `Transport.sessionId`) is the one whose snapshot is
   * kept from then on.
   */
  readonly onStart = (core: Session.SessionShape, transport: Transport.TransportShape): void => {
    const id = transport.sessionId?.()
    const held = id === undefined ? undefined : this.table.get(id)
    if (held === undefined) return
    held.core = core
    core.state.id = id
    core.state.onChange = this.changed
  }

  // One function for every session (a closure per session would cost each idle one).
  private readonly changed = (state: Session.State): void => {
    if (state.id !== undefined) this.changes?.mark(state.id, "Changed")
  }

  /**
   * The snapshot of a held session, or undefined (unknown here, or not
   * initialized yet); last active now while it is busy, else as idle expiry
   * counts it (`Held.idleFor`).
   */
  snapshot(id: string): SessionSnapshot.SessionSnapshot | undefined {
    const held = this.table.get(id)
    const core = held?.core
    if (held === undefined || core === undefined) return undefined
    const now = this.clock.currentTimeMillisUnsafe()
    const activeAt = held.isBusy() ? now : now - held.idleFor(now)
    return SessionSnapshot.of(core.state, { client: held.client, principal: held.owner }, activeAt)
  }

  /**
   * The change of session `id` nobody read yet, taken now (so a keeper can
   * write it down before the reply of the request that made it goes out);
   * undefined when there is none.
   */
  takeChange(id: string): SessionChange | undefined {
    const changes = this.changes
    const what = changes?.pending.get(id)
    if (changes === undefined || what === undefined) return undefined
    changes.pending.delete(id)
    if (what !== "Changed") return { _tag: "Closed", sessionId: id, reason: what }
    const snapshot = this.snapshot(id)
    return snapshot === undefined ? undefined : { _tag: "Saved", sessionId: id, snapshot }
  }

  /**
   * Starts keeping the changes of every session's snapshot, and every close,
   * until the scope closes: the stream reads them, each session at most once
   * per read (its latest state). One reader at a time.
   */
  get changeStream(): Effect.Effect<Stream.Stream<SessionChange>, never, Scope.Scope> {
    return Effect.map(
      Effect.acquireRelease(
        Effect.map(Queue.unbounded<string>(), (ids) => (this.changes = new Changes(ids))),
        (changes) =>
          Effect.sync(() => {
            if (this.changes === changes) this.changes = undefined
          })
      ),
      (changes) =>
        Stream.fromQueue(changes.ids).pipe(
          Stream.map((id) => this.takeChange(id)),
          Stream.filter((change): change is SessionChange => change !== undefined)
        )
    )
  }

  // ---- timers --------------------------------------------------------------------

  /** Closes the sessions idle (and not busy) for the idle timeout. */
  get sweep(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const now = this.clock.currentTimeMillisUnsafe()
      const idle: Array<readonly [string, H]> = []
      for (const entry of this.table) {
        const held = entry[1]
        if (!held.isBusy() && held.idleFor(now) >= this.idleMs) idle.push(entry)
      }
      return Effect.forEach(idle, ([id, held]) => this.closeHeld(id, held, "Expired"), { discard: true })
    })
  }

  /** Watches every session's connections once (see `Held.watch`). */
  get watch(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const now = this.clock.currentTimeMillisUnsafe()
      const keepalive = now - this.keepaliveAt >= millis(this.options.keepaliveEvery)
      if (keepalive) this.keepaliveAt = now
      return Effect.flatMap(
        Effect.forEach([...this.table], ([id, held]) =>
          held.stalled?.() === true ? Effect.as(this.closeHeld(id, held, "Deleted"), 1) : held.watch(keepalive)
        ),
        (closed) => {
          const total = closed.reduce((sum, n) => sum + n, 0)
          const onStalled = this.options.onStalled
          return total === 0 || onStalled === undefined ? Effect.void : onStalled(total)
        }
      )
    })
  }

  /**
   * Runs the timers in the current scope: idle sessions swept at a tenth of
   * the idle timeout (at most once a minute), connections watched every
   * `watchEvery`.
   */
  get runTimers(): Effect.Effect<void, never, Scope.Scope> {
    const every = (ms: number, effect: Effect.Effect<void>) =>
      Number.isFinite(ms)
        ? Effect.asVoid(Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(ms)), effect))))
        : Effect.void
    return Effect.andThen(
      every(Number.isFinite(this.idleMs) ? Math.max(1, Math.min(this.idleMs / 10, 60_000)) : this.idleMs, this.sweep),
      every(Math.max(1, millis(this.options.watchEvery)), this.watch)
    )
  }
}

/** A registry of sessions on the current Clock. */
export const make = <H extends Held>(options: Options): Effect.Effect<SessionRegistry<H>> =>
  Effect.clockWith((clock) => Effect.succeed(new SessionRegistry<H>(options, clock)))
