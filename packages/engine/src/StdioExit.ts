/**
 * How a stdio server process ended, or why it could not start: the exit code
 * or signal, the `ServerExited` error a client's transport fails with (its
 * message ends with the tail of the server's stderr), and the error of a
 * launch that failed. Re-exported by `StdioTransport`.
 */
import * as Schema from "effect/Schema"
import * as StdioStart from "./internal/stdioStart.ts"
import type * as Transport from "./Transport.ts"

/** How a child process ended: an exit code, or the signal that killed it. */
export interface ProcessExit {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * The server process ended on its own. Carried as the `cause` of the
 * `TransportError` (reason `Closed`) that fails the client's `incoming`, and
 * so the session's `closed`; `serverExited` digs it out.
 */
export class ServerExited extends Schema.TaggedError<ServerExited>()("StdioServerExited", {
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  stderrTail: Schema.String
}) {
  /** The exit and the last lines of stderr (at most 20 lines, 4 KiB; `stderrTail` has all that was kept). */
  override get message(): string {
    const how = this.signal === null ? `with code ${this.exitCode}` : `on ${this.signal}`
    const tail = lastLines(this.stderrTail)
    return tail === ""
      ? `the server process exited ${how}`
      : `the server process exited ${how}; stderr ends with:\n${tail}`
  }
}

const messageTailLines = 20
const messageTailChars = 4096

/** The last lines of `text`, as many as fit the bounds (trailing blank lines dropped). */
const lastLines = (text: string): string => {
  const lines = text.replace(/\s+$/, "").split("\n")
  let tail = lines.slice(-messageTailLines).join("\n")
  if (tail.length > messageTailChars) tail = tail.slice(tail.length - messageTailChars)
  return tail
}

/**
 * The error of a server process that could not be started, naming the
 * command and why, from the system error code along `cause`'s chain:
 * "failed to start the server process `x`: not found (ENOENT)". Every
 * `Launch` fails with it.
 */
export const startFailed: (
  options: { readonly command: string; readonly cwd?: string | undefined },
  cause: unknown
) => Transport.TransportError = StdioStart.startFailed

/**
 * The `ServerExited` behind an error, if that is what it was: found along the
 * chain of `cause`s (a client's `InitializeError`, the `SessionClosed` it
 * wraps, the transport's `TransportError`).
 */
export const serverExited = (error: unknown): ServerExited | undefined => {
  let current = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof ServerExited) return current
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}
