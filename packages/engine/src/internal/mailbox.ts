/**
 * A bounded single-reader mailbox for in-process transports.
 *
 * effect's Queue wakes a waiting taker through its dispatcher, which costs a
 * macrotask (setImmediate) per wake-up: two per in-process call. Here the
 * waiting reader is resumed on a microtask instead, the way a Promise-based
 * peer would see the message, while the sender's stack is left alone (no
 * re-entrant handling inside `send`). Senders past `capacity` wait in arrival
 * order and are admitted in that order as the reader drains.
 *
 * Instead of a reading fiber, a consumer may take the items (`attach`): it
 * is handed them one by one on that microtask, with no fiber resumed, and can
 * ask the mailbox to wait (bounded as before) until it resumes it.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

type Batch<A> = readonly [A, ...Array<A>]

interface Writer<A> {
  readonly item: A
  readonly resume: (effect: Effect.Effect<boolean>) => void
}

const accepted: Effect.Effect<boolean> = Exit.succeed(true)
const refused: Effect.Effect<boolean> = Exit.succeed(false)
const ended = Cause.done()
const resolved = Promise.resolve()

/** Takes the items of an attached mailbox. */
export interface Consumer<A> {
  /** Takes one item; false when it can take no more until it calls the mailbox's `resume`. */
  readonly push: (item: A) => boolean
  /** The mailbox was closed and every item was taken. */
  readonly end: () => void
}

export class Mailbox<A> {
  private items: Array<A> = []
  private readonly writers: Array<Writer<A>> = []
  private reader: ((effect: Effect.Effect<Batch<A>, Cause.Done>) => void) | undefined = undefined
  private wakeScheduled = false
  private closed = false
  private consumer: Consumer<A> | undefined = undefined
  // The consumer asked to wait, or the mailbox is handing it items right now.
  private paused = false
  private pumping = false
  private spare: Array<A> = []
  readonly capacity: number

  constructor(capacity: number) {
    this.capacity = Math.max(1, capacity)
  }

  /** Whether an item offered now would be taken without waiting. */
  hasRoom(): boolean {
    return !this.closed && this.writers.length === 0 && this.items.length < this.capacity
  }

  /** Takes an item; only when `hasRoom()` said it would. */
  offerNow(item: A): void {
    this.items.push(item)
    this.wake()
  }

  /** Succeeds with false once the mailbox is closed (the item is dropped). */
  offer(item: A): Effect.Effect<boolean> {
    if (this.closed) return refused
    if (this.hasRoom()) {
      this.offerNow(item)
      return accepted
    }
    return Effect.callback<boolean>((resume) => {
      if (this.closed) return resume(refused)
      const writer: Writer<A> = { item, resume }
      this.writers.push(writer)
      this.wake()
      return Effect.sync(() => {
        const index = this.writers.indexOf(writer)
        if (index >= 0) this.writers.splice(index, 1)
      })
    })
  }

  /** Every buffered item (at least one); fails with `Done` once closed and drained. */
  readonly take: Effect.Effect<Batch<A>, Cause.Done> = Effect.suspend(() => {
    const batch = this.drain()
    if (batch !== undefined) return Exit.succeed(batch)
    if (this.closed) return ended
    return Effect.callback<Batch<A>, Cause.Done>((resume) => {
      this.reader = resume
      return Effect.sync(() => {
        if (this.reader === resume) this.reader = undefined
      })
    })
  })

  /** Hands every item to `consumer` from now on; nothing may `take` afterwards. */
  attach(consumer: Consumer<A>): void {
    this.consumer = consumer
    this.schedule()
  }

  /** The consumer takes items again after asking to wait. */
  readonly resume = (): void => {
    if (!this.paused) return
    this.paused = false
    this.schedule()
  }

  /** Later offers are refused; the reader gets what is buffered, then `Done`. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const writer of this.writers.splice(0)) writer.resume(refused)
    this.wake()
  }

  /** Takes every buffered item; `next` (empty) becomes the buffer. */
  private drain(next: Array<A> = []): Batch<A> | undefined {
    if (this.items.length === 0 && this.writers.length === 0) return undefined
    const batch = this.items
    this.items = next
    if (this.writers.length > 0) {
      // Waiting senders are admitted in arrival order, up to capacity; they are
      // resumed only once the batch is complete, since a resumed sender may
      // offer again at once.
      const admitted = this.writers.splice(0, this.capacity)
      for (const writer of admitted) batch.push(writer.item)
      for (const writer of admitted) writer.resume(accepted)
    }
    return batch.length === 0 ? undefined : (batch as unknown as Batch<A>)
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
    resolved.then(this.onWake)
  }

  private readonly onWake = (): void => {
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
    } else if (this.closed) {
      this.reader = undefined
      reader(ended)
    }
  }

  private pump(consumer: Consumer<A>): void {
    if (this.paused || this.pumping) return
    this.pumping = true
    try {
      for (;;) {
        const batch = this.drain(this.spare) as Array<A> | undefined
        if (batch === undefined) break
        for (let i = 0; i < batch.length; i++) {
          if (consumer.push(batch[i]!)) continue
          // The consumer waits: what it did not take goes back in front, in order.
          this.paused = true
          if (i + 1 < batch.length) this.items = batch.slice(i + 1).concat(this.items)
          this.spare = []
          return
        }
        // Two buffers take turns: the one handed over is emptied and becomes the next buffer.
        batch.length = 0
        this.spare = batch
      }
    } finally {
      this.pumping = false
    }
    if (this.closed) {
      this.consumer = undefined
      consumer.end()
    }
  }
}
