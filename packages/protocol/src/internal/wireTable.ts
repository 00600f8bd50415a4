/**
 * The shape of a generated wire module's method tables (read by Registry.ts).
 * Kept apart from `wire/index.ts`, which imports every revision module: the
 * generated modules take their table types from here, so no import of theirs
 * leads back to the index.
 */
import type { AnyCodec, Sender } from "../Revision.ts"

/** A notification of one revision: who sends it and its params schema, built when first asked for. */
export interface WireNotification {
  readonly method: string
  readonly sender: Sender
  readonly params: () => AnyCodec
  readonly paramsRequired: boolean
}

/** A request of one revision: a notification's fields plus the result schema the spec pairs it with. */
export interface WireRequest extends WireNotification {
  readonly result: () => AnyCodec
}

/** What every generated revision module exports for the Registry. */
export interface WireModule {
  readonly requests: ReadonlyArray<WireRequest>
  readonly notifications: ReadonlyArray<WireNotification>
  readonly inputRequests: ReadonlyArray<WireRequest>
}
