/**
 * What one MCP revision allows, as data: its methods (who sends them, their
 * schemas, the capability that gates them), whether batches exist, whether the
 * revision is stateless. The engine reads only this; it never branches on a
 * revision string.
 */
import type * as Schema from "effect/Schema"
import type { ProtocolVersion } from "./ProtocolVersion.ts"

/** Who may send a message. */
export type Sender = "client" | "server" | "both"

/**
 * A capability that must be declared for a method to be used: `side` is the
 * party that declares it (the receiver of the request), `path` the keys inside
 * its `capabilities` object, e.g. `{ side: "server", path: ["resources", "subscribe"] }`.
 * `"receiver"` is for methods either party may send (the 2025-11-25 `tasks/*`):
 * whoever receives the request must have declared the capability.
 */
export interface CapabilityRef {
  readonly side: "client" | "server" | "receiver"
  readonly path: ReadonlyArray<string>
}

/** A Schema with no service requirements. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds schemas of every shape
export type AnyCodec = Schema.Codec<any, any, never, never>

/** A request method of a revision: who sends it, its params and result Schemas, the capability it needs. */
export interface RequestSpec {
  readonly _tag: "Request"
  readonly method: string
  readonly sender: Sender
  /** The wire schema of `params` for this revision (an empty-struct schema when the spec has no params). */
  readonly params: AnyCodec
  /** Whether `params` must be present on the wire. */
  readonly paramsRequired: boolean
  /** The wire schema of the `result` (for 2026-07-28, the union the spec allows, e.g. with InputRequiredResult). */
  readonly result: AnyCodec
  readonly capability: CapabilityRef | undefined
}

/** A notification method of a revision: who sends it, its params Schema, the capability it needs. */
export interface NotificationSpec {
  readonly _tag: "Notification"
  readonly method: string
  readonly sender: Sender
  readonly params: AnyCodec
  readonly paramsRequired: boolean
  readonly capability: CapabilityRef | undefined
}

/** A method of a revision. */
export type MethodSpec = RequestSpec | NotificationSpec

/** One revision: its methods and their Schemas, and what it has. */
export interface RevisionSpec {
  readonly version: ProtocolVersion
  /** Stateless revisions (2026-07-28) have no `initialize` handshake. */
  readonly stateless: boolean
  /** Whether JSON-RPC batches may be sent/received (only 2025-03-26 allows them). */
  readonly batches: boolean
  /** Every method of the revision, keyed by method name. */
  readonly methods: ReadonlyMap<string, MethodSpec>
  /**
   * Server-to-client requests that this revision carries inside an
   * `InputRequiredResult` (and answers in the retried request's `inputResponses`)
   * instead of as JSON-RPC requests: sampling, elicitation and roots on 2026-07-28.
   * Empty for the other revisions.
   */
  readonly inputRequests: ReadonlyMap<string, RequestSpec>
}
