/**
 * What a session is, written down: its negotiated revision, the other side's
 * capabilities and info, whom it counts against and whom it is bound to, where
 * its outgoing request ids go on, and what features keep about it (a server's
 * log level, its resource subscriptions). Enough for another process to
 * continue the session without a handshake: a cluster stores the snapshots of
 * its sessions and reopens a moved session from its own
 * (`StreamableHttpServer.restoreSession`).
 *
 * A snapshot also says when the session was last active, so that a session
 * moved to another process keeps its idle clock: one idle past the idle
 * timeout is expired there too, not reopened (`SessionRegistry.mayRestore`).
 *
 * A snapshot is data with a Schema, so it is stored and read back as JSON
 * through `Json`, never parsed by hand.
 */
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Session from "./Session.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** The snapshot of a session (see the module's documentation). */
export const SessionSnapshot = Schema.Struct({
  /** The revision `initialize` negotiated. */
  revision: ProtocolVersion.ProtocolVersion,
  /** The other side's declared capabilities. */
  peerCapabilities: JsonObject,
  /** The other side's `clientInfo` (a server's session) or `serverInfo`, when it sent one. */
  peerInfo: Schema.optional(
    Schema.StructWithRest(Schema.Struct({ name: Schema.String, version: Schema.String }), [JsonObject])
  ),
  /** Whom the session counts against for per-client quotas (the principal's owner when authenticated). */
  client: Schema.optional(Schema.String),
  /** The principal the session is bound to (`Authenticated.owner`), when the server authenticates. */
  principal: Schema.optional(Schema.String),
  /** Every outgoing request id the session used is below this one (see `Session.State.requestIdsBelow`). */
  nextRequestId: Schema.Int,
  /** What features keep about the session, by key (see `Session.State.features`). */
  features: JsonObject,
  /**
   * When the session was last active, in epoch milliseconds on the Clock: its
   * client's last request or the end of its last reply (the time the snapshot
   * was taken while it serves one). Absent in a snapshot written before it was kept.
   */
  activeAt: Schema.optional(Schema.Number)
})

/** The snapshot of a session. */
export type SessionSnapshot = typeof SessionSnapshot.Type

/** A snapshot as JSON text, for a store (decoding checks every field). */
export const Json = Schema.fromJsonString(SessionSnapshot)

/** A snapshot as JSON text. */
export const toJson: (snapshot: SessionSnapshot) => string = Schema.encodeSync(Json)

/** The snapshot a JSON text holds, or undefined when it is not one (a row of another shape). */
export const fromJson = (text: string): SessionSnapshot | undefined =>
  Option.getOrUndefined(Schema.decodeUnknownOption(Json)(text))

/** Who a session belongs to, as its transport knows it. */
export interface Owner {
  /** Whom it counts against for per-client quotas. */
  readonly client?: string | undefined
  /** The principal it is bound to, when the server authenticates. */
  readonly principal?: string | undefined
}

/**
 * The snapshot of a session in `state`, last active at `activeAt` (epoch
 * milliseconds), or undefined before it negotiated a revision.
 */
export const of = (state: Session.State, owner: Owner, activeAt?: number): SessionSnapshot | undefined => {
  const revision = state.revision
  if (revision === undefined) return undefined
  return {
    revision: revision.version,
    peerCapabilities: state.peerCapabilities,
    ...(state.peerInfo === undefined ? {} : { peerInfo: state.peerInfo }),
    ...(owner.client === undefined ? {} : { client: owner.client }),
    ...(owner.principal === undefined ? {} : { principal: owner.principal }),
    nextRequestId: state.requestIdsBelow,
    features: state.features,
    ...(activeAt === undefined ? {} : { activeAt })
  }
}

/** How a session continues from `snapshot`: ready at once, in its revision, with what its features kept. */
export const toInitialized = (snapshot: SessionSnapshot): Session.Initialized => ({
  revision: snapshot.revision,
  peerCapabilities: snapshot.peerCapabilities,
  peerInfo: snapshot.peerInfo,
  features: snapshot.features,
  nextRequestId: snapshot.nextRequestId
})
