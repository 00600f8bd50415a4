/**
 * The state of one server's connection, as the host reports it: connecting,
 * ready (with what both sides declared), degraded (lost or unhealthy; the
 * host retries after `retryIn`), or failed (the reconnect schedule gave up,
 * and `McpHost.restart` tries again; or the host was closed). A failure says why, with the exit code,
 * signal and the tail of stderr when a stdio server's process ended.
 */
import type * as Session from "@effect-mcp/engine/Session"
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import type * as Lifecycle from "@effect-mcp/protocol/Lifecycle"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import type * as Duration from "effect/Duration"

/** Why a connection was lost or could not be made. */
export interface Failure {
  readonly message: string
  /** A stdio server's exit code (null when a signal ended it). */
  readonly exitCode?: number | null | undefined
  /** The signal that ended a stdio server. */
  readonly signal?: string | null | undefined
  /** The last of what a stdio server wrote to stderr. */
  readonly stderrTail?: string | undefined
}

/** What a ready connection negotiated and declared. */
export interface Connection {
  readonly revision: ProtocolVersion.ProtocolVersion
  readonly serverInfo: Session.Implementation | undefined
  readonly serverCapabilities: Lifecycle.ServerCapabilities
  /** What the host declared to this server: it follows from the handler services the host was given. */
  readonly clientCapabilities: Session.Capabilities
  readonly instructions: string | undefined
  /** A stdio server's process id. */
  readonly pid: number | undefined
}

/** Starting a connection (`attempt` counts from 1 since the server was last ready). */
export interface Connecting {
  readonly _tag: "Connecting"
  readonly attempt: number
}

/** Connected and answering. */
export interface Ready {
  readonly _tag: "Ready"
  readonly connection: Connection
}

/**
 * Not usable for now: the connection was lost or could not be made (the
 * host retries after `retryIn`), or, with `retryIn` undefined, it is still
 * connected but failed a health check.
 */
export interface Degraded {
  readonly _tag: "Degraded"
  readonly failure: Failure
  /** Connection attempts that failed since the server was last ready (0: a ready connection was lost). */
  readonly attempt: number
  readonly retryIn: Duration.Duration | undefined
}

/**
 * The reconnect schedule gave up; `McpHost.restart` starts over. Also the
 * last status of every server of a closed host (the failure says "the host
 * was closed"), which never connects again.
 */
export interface Failed {
  readonly _tag: "Failed"
  readonly failure: Failure
}

/** The state of one server's connection. */
export type ServerStatus = Connecting | Ready | Degraded | Failed

/** One server's new status. */
export interface StatusChange {
  readonly server: string
  readonly status: ServerStatus
}

const messageOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message === "" && "_tag" in error ? String(error._tag) : error.message
  }
  return String(error)
}

/** The failure behind an error: a stdio server's exit (code, signal, stderr tail) when that is what it was. */
export const failureOf = (error: unknown): Failure => {
  const exited = StdioTransport.serverExited(error)
  if (exited !== undefined) {
    return {
      message: exited.message,
      exitCode: exited.exitCode,
      signal: exited.signal,
      stderrTail: exited.stderrTail
    }
  }
  return { message: messageOf(error) }
}
