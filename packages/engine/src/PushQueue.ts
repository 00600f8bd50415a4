/**
 * The engine's one bounded, single-consumer queue, used wherever frames wait
 * between a producer and the one party that handles them (the memory
 * transport's inboxes, the Peer's pushed input, the stdio inbox).
 *
 * Why not effect's Queue: it wakes a waiting taker through its dispatcher, a
 * macrotask (setImmediate) per wake-up, two per in-process call. Here the
 * taker is woken on a microtask, the way a Promise-based peer would see the
 * item, and the producer's stack is left alone (no re-entrant handling inside
 * `offer`).
 *
 * The rules:
 * - Bounded: up to `capacity` items are buffered. `offer` past that suspends
 *   the writer; waiting writers form a strict FIFO line and are admitted in
 *   that order as the consumer drains (a writer resumed may offer again at once
 *   and still lands behind the ones admitted with it).
 * - Interruption: a writer interrupted while it waits leaves the line; its
 *   item is never delivered (nothing is half-sent).
 * - One consumer, either a fiber that `take`s every buffered item as a batch,
 *   or a `Consumer` that is handed items one by one (`attach`) and may pause
 *   the queue (its `push` returns false) until it calls `resume`.
 * - `close` refuses later offers and waiting writers; the consumer still gets
 *   what is buffered, then the end (`Done`, or the error `close` was given).
 * - A producer that cannot wait per item (bytes decoded into many frames at
 *   once) may `offerNow` past the bound and pause itself, resuming when
 *   `onTaken` tells it the consumer took the buffer.
 * - A consumer that measures room by its own rule (the HTTP send line: room
 *   on whichever connection its stream has now, and an Effect to run per
 *   item) uses the writers' line alone: a writer `enterLine`s whatever the
 *   room (synchronously, so it keeps its place under the caller's lock) and
 *   `awaitAdmission`s, or leaves an item there that nobody waits for; the
 *   consumer `admit`s them one at a time, in order. Interruption and `close`
 *   work as for any waiting writer.
 *
 * Usage (inside an Effect.gen):
 * ```text
 * const queue = new PushQueue<number>(16)
 * yield* queue.offer(1)                   // suspends while full; false once closed
 * if (queue.hasRoom()) queue.offerNow(2)  // the synchronous fast path
 * const batch = yield* queue.take         // [1, 2]; fails with Done once closed and drained
 * ```
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ForeignScheduler from "./internal/foreignScheduler.ts"

/** What `take` hands over: every buffered item, at least one. */
export type Batch<A> = readonly [A, ...Array<A>]

/** Takes the items of an attached queue, one by one. */
export interface Consumer<A> {
  /** Takes one item; false when it can take no more until it calls the queue's `resume`. */
  readonly push: (item: A) => boolean
  /** The queue was closed and every item was taken. */
  readonly end: () => void
  /**
   * Optional: the consumer took every item and nothing waits to be admitted
   * (the queue is open). An owner that holds many idle queues may drop this
   * one here and make a new one for its next item.
   */
  readonly idle?: (() => void) | undefined
}

/** A place in the writers' line (see `enterLine`). */
export interface Place<A> {
  readonly item: A
}

interface Writer<A> extends Place<A> {
  /** The waiting fiber; unset while nobody waits on the place yet (or ever). */
  resume: ((effect: Effect.Effect<boolean>) => void) | undefined
  /** How the place ended, kept for a wait that starts afterwards. */
  outcome: Effect.Effect<boolean> | undefined
}

/** Ends a place in line: its waiting writer resumes, or a later wait finds the outcome. */
const settle = <A>(writer: Writer<A>, outcome: Effect.Effect<boolean>): void => {
  writer.outcome = outcome
  writer.resume?.(outcome)
}

const accepted: Effect.Effect<boolean> = Exit.succeed(true)
const refused: Effect.Effect<boolean> = Exit.succeed(false)

/** Admitted writers resume (their items are in place). */
const resumeAll = <A>(admitted: ReadonlyArray<Writer<A>> | undefined): void => {
  if (admitted !== undefined) for (const writer of admitted) settle(writer, accepted)
}

const done: Exit.Exit<never, Cause.Done> = Exit.fail(Cause.Done())
const resolved = Promise.resolve()

/**
 * A bounded, single-consumer queue whose taker is woken on a microtask (see
 * the module's documentation for its rules and why effect's `Queue` is not
 * used here). Shared by the engine's transports and `@effect-mcp/http`'s.
 */
export class PushQueue<A, E = never> {
  // The buffer: items[head] to items[count - 1], in order. It is emptied by
  // moving the two indices back to 0, never by `length = 0`, which makes V8
  // drop the backing store, so every item after an empty queue allocated a
  // new one (two per in-process call, ~300 bytes). Taken slots are cleared.
  private items: Array<A | undefined> = []
  private head = 0
  private count = 0
  // Made when the first writer has to wait: most queues never see one.
  private writers: Array<Writer<A>> | undefined = undefined
  private reader: ((effect: Effect.Effect<Batch<A>, E | Cause.Done>) => void) | undefined = undefined
  private wakeScheduled = false
  private ending: Exit.Exit<never, E | Cause.Done> | undefined = undefined
  private consumer: Consumer<A> | undefined = undefined
  // The consumer asked to wait, or the queue is handing it items right now.
  private paused = false
  private pumping = false
  // A server holds many queues (its sessions' streams): `take` is made on first use, not per queue.
  private taking: Effect.Effect<Batch<A>, E | Cause.Done> | undefined = undefined
  private resuming: (() => void) | undefined = undefined
  readonly capacity: number
  private readonly onTaken: (() => void) | undefined

  /**
   * `onTaken` runs whenever the consumer takes the buffered items, for a
   * producer that paused itself after `offerNow` filled the queue.
   */
  constructor(capacity: number, onTaken?: () => void) {
    this.capacity = Math.max(1, capacity)
    this.onTaken = onTaken
  }

  /** Items buffered now (waiting writers not counted). */
  get size(): number {
    return this.count - this.head
  }

  /** Whether the queue was closed (its consumer may still be taking what is buffered). */
  get closed(): boolean {
    return this.ending !== undefined
  }

  /** Whether an item offered now would be taken without waiting. */
  hasRoom(): boolean {
    return this.ending === undefined && this.count - this.head < this.capacity && !this.hasWriters()
  }

  /**
   * Buffers an item now, even past `capacity`: for callers that checked
   * `hasRoom()`, or producers that pause themselves when the queue is full.
   */
  offerNow(item: A): void {
    this.items[this.count++] = item
    this.wake()
  }

  /**
   * Hands what is buffered to the attached consumer now, on the caller's
   * stack, rather than on the wake-up's microtask: for a producer called from
   * an event of its own (a reader's data callback), where no caller's state
   * can be re-entered. Nothing happens without a consumer, or while it is paused.
   */
  deliverNow(): void {
    if (this.consumer !== undefined) this.pump(this.consumer)
  }

  /**
   * `offerNow` for a producer that calls `deliverNow` next, in the same
   * event: with a consumer attached the item is buffered without scheduling a
   * wake-up, which that `deliverNow` makes unneeded (a paused consumer is
   * woken by its `resume`). On the stdio path of every message that wake-up
   * was a microtask that found nothing to hand over. Without a consumer it is
   * `offerNow`.
   */
  offerBeforeDelivery(item: A): void {
    if (this.consumer === undefined) {
      this.offerNow(item)
      return
    }
    this.items[this.count++] = item
  }

  /** Buffers the item if that needs no wait (`hasRoom()`); false otherwise. */
  tryOffer(item: A): boolean {
    if (!this.hasRoom()) return false
    this.offerNow(item)
    return true
  }

  /** Waits in line for room; succeeds with false once the queue is closed (the item is dropped). */
  offer(item: A): Effect.Effect<boolean> {
    if (this.ending !== undefined) return refused
    if (this.hasRoom()) {
      this.offerNow(item)
      return accepted
    }
    return this.join(item)
  }

  /** Writers (and held items) in the line, waiting to be admitted. */
  get waiting(): number {
    return this.writers === undefined ? 0 : this.writers.length
  }

  /**
   * Joins the writers' line now, even when there is room, to be admitted by
   * the consumer's `admit` (a place already refused once closed). Nobody
   * need wait on the place: an item no writer waits for holds its place.
   */
  enterLine(item: A): Place<A> {
    const writer: Writer<A> = { item, resume: undefined, outcome: undefined }
    if (this.ending !== undefined) writer.outcome = refused
    else this.line().push(writer)
    return writer
  }

  /**
   * Waits until the place is admitted (true) or refused by `close` (false).
   * Interrupted meanwhile, it leaves the line: its item is never admitted.
   */
  awaitAdmission(place: Place<A>): Effect.Effect<boolean> {
    const writer = place as Writer<A>
    if (writer.outcome !== undefined) return writer.outcome
    return Effect.callback<boolean>((resume) => {
      if (writer.outcome !== undefined) return resume(writer.outcome)
      writer.resume = resume
      return Effect.sync(() => this.leave(writer))
    })
  }

  /**
   * Admits the head of the writers' line, its writer resuming with true, and
   * hands its item to the caller instead of buffering it; undefined when the
   * line is empty. For the consumer that decides room itself.
   */
  admit(): A | undefined {
    const writer = this.writers?.shift()
    if (writer === undefined) return undefined
    settle(writer, accepted)
    return writer.item
  }

  /** Every buffered item (at least one); fails with the end once closed and drained. */
  get take(): Effect.Effect<Batch<A>, E | Cause.Done> {
    if (this.taking === undefined) {
      this.taking = Effect.suspend(() => {
        const batch = this.drain()
        if (batch !== undefined) return Exit.succeed(batch)
        if (this.ending !== undefined) return this.ending
        return Effect.callback<Batch<A>, E | Cause.Done>((resume) => {
          this.reader = resume
          return Effect.sync(() => {
            if (this.reader === resume) this.reader = undefined
          })
        })
      })
    }
    return this.taking
  }

  /** Hands every item to `consumer` from now on; nothing may `take` afterwards. */
  attach(consumer: Consumer<A>): void {
    this.consumer = consumer
    this.schedule()
  }

  /** The consumer takes items again after asking to wait (a function of its own, so it may be passed on alone). */
  get resume(): () => void {
    if (this.resuming === undefined) this.resuming = () => this.resumeNow()
    return this.resuming
  }

  private resumeNow(): void {
    if (!this.paused) return
    this.paused = false
    this.schedule()
  }

  /**
   * Later offers are refused and so are the writers waiting; the consumer
   * gets what is buffered, then the end: `Done`, or `error`.
   */
  close(error?: E): void {
    if (this.ending !== undefined) return
    this.ending = error === undefined ? done : Exit.fail(error)
    this.refuseWriters()
    this.wake()
  }

  /** Closes and drops what is buffered: the consumer is handed nothing more and not told the end. */
  halt(): void {
    if (this.ending === undefined) this.ending = done
    this.refuseWriters()
    this.clear()
    this.consumer = undefined
    this.wake()
  }

  /** Waits in the writers' line until admitted (true) or refused (false); an interrupt leaves the line. */
  private join(item: A): Effect.Effect<boolean> {
    return Effect.callback<boolean>((resume) => {
      if (this.ending !== undefined) return resume(refused)
      const writer: Writer<A> = { item, resume, outcome: undefined }
      this.line().push(writer)
      this.wake()
      return Effect.sync(() => this.leave(writer))
    })
  }

  private leave(writer: Writer<A>): void {
    const writers = this.writers
    const index = writers === undefined ? -1 : writers.indexOf(writer)
    if (index >= 0) writers!.splice(index, 1)
  }

  private line(): Array<Writer<A>> {
    if (this.writers === undefined) this.writers = []
    return this.writers
  }

  private hasWriters(): boolean {
    return this.writers !== undefined && this.writers.length > 0
  }

  private refuseWriters(): void {
    const writers = this.writers
    if (writers === undefined) return
    this.writers = undefined
    for (const writer of writers) settle(writer, refused)
  }

  /** Takes every buffered item, as an array of its own (handed to the `take`r). */
  private drain(): Batch<A> | undefined {
    if (this.count === this.head && !this.hasWriters()) return undefined
    const admitted = this.admitWriters()
    const batch = this.items.slice(this.head, this.count) as Array<A>
    this.clear()
    resumeAll(admitted)
    this.onTaken?.()
    return batch as unknown as Batch<A>
  }

  /**
   * Waiting writers are admitted in arrival order, up to capacity: their
   * items go behind the buffered ones. Their writers are returned, to be
   * resumed once the caller took what it takes (`resumeAll`), since a resumed
   * writer may offer again at once.
   */
  private admitWriters(): ReadonlyArray<Writer<A>> | undefined {
    if (!this.hasWriters()) return undefined
    const admitted = this.writers!.splice(0, this.capacity)
    for (const writer of admitted) this.items[this.count++] = writer.item
    return admitted
  }

  /** Empties the buffer, keeping its backing store. */
  private clear(): void {
    const items = this.items
    for (let i = this.head; i < this.count; i++) items[i] = undefined
    this.head = 0
    this.count = 0
  }

  private wake(): void {
    if (this.consumer !== undefined) {
      if (!this.paused && !this.pumping) this.schedule()
      return
    }
    if (this.reader === undefined) return
    this.schedule()
  }

  private schedule(): void {
    if (this.wakeScheduled) return
    this.wakeScheduled = true
    PushQueue.wakeLater(this as unknown as PushQueue<unknown, unknown>)
  }

  // ---- wake-ups: one microtask for every queue woken in the same turn --------

  // The queues to wake, in the order they asked, and how many. Emptied by the count (slots cleared), not by
  // `length = 0`, which drops the backing store. A microtask per queue (`then` and a closure each) cost two
  // promise reactions and two closures per in-process call, and one per call for every call in flight.
  private static waking: Array<PushQueue<unknown, unknown> | undefined> = []
  private static wakingCount = 0
  private static spareWaking: Array<PushQueue<unknown, unknown> | undefined> = []
  private static flushScheduled = false

  private static wakeLater(queue: PushQueue<unknown, unknown>): void {
    PushQueue.waking[PushQueue.wakingCount++] = queue
    ForeignScheduler.hold(PushQueue.flush)
    if (PushQueue.flushScheduled) return
    PushQueue.flushScheduled = true
    resolved.then(PushQueue.flush)
  }

  /**
   * Wakes the queues listed when the microtask was queued. Those listed
   * meanwhile (a consumer that offers to another queue) wait for the next
   * microtask, as a microtask of their own would, behind what was queued in between.
   */
  private static flush(): void {
    const dispatcher = ForeignScheduler.take()
    if (dispatcher !== undefined) {
      // Runs this again, as the dispatcher's task.
      dispatcher.flush()
      return
    }
    const queues = PushQueue.waking
    const count = PushQueue.wakingCount
    PushQueue.waking = PushQueue.spareWaking
    PushQueue.spareWaking = queues
    PushQueue.wakingCount = 0
    PushQueue.flushScheduled = false
    let i = 0
    try {
      for (; i < count; i++) {
        const queue = queues[i]!
        queues[i] = undefined
        queue.onWake()
      }
    } finally {
      // A consumer threw (a defect): the queues after it are still woken, on the next microtask.
      for (i++; i < count; i++) {
        PushQueue.wakeLater(queues[i]!)
        queues[i] = undefined
      }
    }
  }

  private onWake(): void {
    this.wakeScheduled = false
    if (this.consumer !== undefined) {
      this.pump(this.consumer)
      return
    }
    const reader = this.reader
    if (reader === undefined) return
    const batch = this.drain()
    if (batch !== undefined) {
      this.reader = undefined
      reader(Exit.succeed(batch))
    } else if (this.ending !== undefined) {
      this.reader = undefined
      reader(this.ending)
    }
  }

  private pump(consumer: Consumer<A>): void {
    if (this.paused || this.pumping) return
    this.pumping = true
    try {
      for (;;) {
        resumeAll(this.admitWriters())
        if (this.count === this.head) break
        this.onTaken?.()
        const items = this.items
        // Items offered while the consumer takes land behind, and are taken in this pass.
        while (this.head < this.count) {
          const item = items[this.head] as A
          items[this.head++] = undefined
          const taken = consumer.push(item)
          // A consumer that halted the queue while taking is handed nothing more.
          if (this.consumer !== consumer) return
          if (taken) continue
          // The consumer waits: what it did not take stays in front, in order.
          this.paused = true
          return
        }
        this.head = 0
        this.count = 0
      }
    } finally {
      this.pumping = false
    }
    if (this.consumer !== consumer) return
    if (this.ending !== undefined) {
      this.consumer = undefined
      consumer.end()
    } else consumer.idle?.()
  }
}
