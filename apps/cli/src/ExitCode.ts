/**
 * The exit codes of `effect-mcp`, one per kind of outcome, so a script can
 * tell a tool that reported an error from a server that refused the request
 * and from a target that could not be reached (docs/cli.md lists them).
 */
import * as Schema from "effect/Schema"

/** The command did what it was asked. */
export const Success = 0
/** The tool ran and returned an `isError` result (printed like any result). */
export const ToolError = 1
/** The command line is wrong: an unknown command or flag, a missing argument, arguments that are not a JSON object. */
export const Usage = 2
/** The target could not be used: no such server in the config, a bad config file, unreachable, failed handshake. */
export const Target = 3
/** The server answered with a JSON-RPC error (an unknown tool or prompt, invalid params, ...) or refused the method. */
export const Protocol = 4
/** The connection was lost during the command, or the request timed out. */
export const Connection = 5
/** Interrupted by Ctrl-C (SIGINT) or SIGTERM; a call in flight was cancelled on the server. */
export const Interrupted = 130

/** Every exit code by name. */
export type ExitCode =
  | typeof Success
  | typeof ToolError
  | typeof Usage
  | typeof Target
  | typeof Protocol
  | typeof Connection
  | typeof Interrupted

/**
 * Why the command ends with a non-zero exit code. `message` is printed as one
 * line on stderr (nothing is printed when it is empty: the output said it).
 */
export class Exit extends Schema.TaggedError<Exit>()("Exit", {
  code: Schema.Int,
  message: Schema.String,
  /** The error behind it, for `--json`'s structured report (never printed whole: no stack reaches the output). */
  cause: Schema.optional(Schema.Defect())
}) {}
