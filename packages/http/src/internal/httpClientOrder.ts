/**
 * The order rule of the Streamable HTTP client's POSTs. Frames reach the
 * server in the order they were sent, though each POST may travel on its own
 * connection: a POST starts once the server accepted the POSTs before it
 * (their replies started), so a cancel never overtakes its request. Only a
 * request may go as soon as the previous body is uploaded, when nothing but
 * requests is still unaccepted ahead of it: the server runs requests
 * concurrently, so no order among them is observable, and a request waiting
 * for the previous one's reply to start would serialize every call.
 *
 * A server that holds a reply's headers back until the result would hold
 * every later message back until then (maybe the very answer its handler
 * waits for): a request counts as accepted `acceptTimeout` after its upload
 * (plus 100 millis per MiB of body, which takes longer to receive and parse).
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** A POST the server has not accepted yet. */
export interface Entry {
  /** Completes when the server took the frame: its reply started. */
  readonly accepted: Deferred.Deferred<void>
  /** A request's POST: completes once its whole body was handed to the connection. */
  readonly uploaded: Deferred.Deferred<void> | undefined
  /** A request of the stateless revision: there is no session order to keep after it. */
  readonly stateless: boolean
  /** Length of the body, once encoded. */
  bytes: number
}

/** One frame's place in the order: what its POST waits for before it starts. */
export interface Slot {
  readonly entry: Entry
  /** Completes when the POST may start. */
  readonly before: Effect.Effect<void>
  /** Completes when the frame's body was uploaded (a request) or accepted (anything else). */
  readonly upload: Effect.Effect<void>
}

const MiB = 1024 * 1024

/** The POSTs not accepted yet, in send order, and the upload of the last one. */
export class PostOrder {
  private readonly unaccepted = new Set<Entry>()
  private lastUpload: Effect.Effect<void> = Effect.void
  private readonly acceptTimeoutMs: number

  constructor(acceptTimeoutMs: number) {
    this.acceptTimeoutMs = acceptTimeoutMs
  }

  /**
   * Takes the next frame's place: `request` for a frame of requests (not the
   * handshake, which goes alone), `stateless` when they are of the stateless
   * revision.
   */
  next(request: boolean, stateless: boolean): Slot {
    const ahead: Array<Effect.Effect<void>> = []
    for (const entry of this.unaccepted)
      if (!request || entry.uploaded === undefined) ahead.push(this.acceptanceOf(entry))
    if (request) ahead.push(this.lastUpload)
    // Side by side: each unaccepted request's `acceptTimeout` runs from its own upload.
    const before =
      ahead.length === 0
        ? Effect.void
        : ahead.length === 1
          ? ahead[0]!
          : Effect.all(ahead, { concurrency: "unbounded", discard: true })
    const entry: Entry = {
      accepted: Deferred.makeUnsafe<void>(),
      uploaded: request ? Deferred.makeUnsafe<void>() : undefined,
      stateless,
      bytes: 0
    }
    this.unaccepted.add(entry)
    const upload = Deferred.await(entry.uploaded ?? entry.accepted)
    this.lastUpload = upload
    return { entry, before, upload }
  }

  /** The server took the frame (its reply started), or its POST ended without that. */
  accept(entry: Entry): void {
    this.unaccepted.delete(entry)
    Deferred.doneUnsafe(entry.accepted, Exit.void)
  }

  /** The request's whole body was handed to the connection. */
  uploaded(entry: Entry): void {
    if (entry.uploaded !== undefined) Deferred.doneUnsafe(entry.uploaded, Exit.void)
  }

  /** Settles an entry whose POST ended, however it ended. */
  settle(entry: Entry): Effect.Effect<void> {
    return Effect.sync(() => {
      this.accept(entry)
      this.uploaded(entry)
    })
  }

  /** When a later message may go after `entry`: once the server accepted it (see the module's comment). */
  private acceptanceOf(entry: Entry): Effect.Effect<void> {
    if (entry.uploaded === undefined) return Deferred.await(entry.accepted)
    if (entry.stateless) return Deferred.await(entry.uploaded)
    return Effect.raceFirst(
      Deferred.await(entry.accepted),
      Effect.andThen(
        Deferred.await(entry.uploaded),
        Effect.suspend(() =>
          Effect.sleep(Duration.millis(this.acceptTimeoutMs + Math.floor((entry.bytes * 100) / MiB)))
        )
      )
    )
  }
}
