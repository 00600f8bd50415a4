/**
 * What the CLI says of a failure: its exit code and one line (`classify`,
 * and `unexpected` for a defect), printed once (`report`); and how a message
 * quotes what it was given (bounded: an argument may be a long JSON text).
 */
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as ExitCode from "../ExitCode.ts"
import * as Render from "../Render.ts"
import * as Target from "../Target.ts"
import * as TerminalText from "./terminalText.ts"

/** The longest part of one argument a message quotes. */
const quoteChars = 40

/** A value as a message quotes it: JSON-quoted, cut to `max` characters. */
export const quoted = (value: string, max = quoteChars): string =>
  JSON.stringify(value.length <= max ? value : `${value.slice(0, max)}...`)

/** The longest URI a message quotes. */
const uriChars = 200

/** A server error about a URI, with the URI (the server may not repeat it): the read says which. */
export const aboutUri = (error: McpError.McpError, uri: string): ExitCode.Exit =>
  new ExitCode.Exit({
    code: ExitCode.Protocol,
    message: `server error ${error.code}: ${Target.oneLine(error.message)} (${quoted(uri, uriChars)})`
  })

const connectionLost = new Set([
  "KeepaliveFailed",
  "RequestTimeout",
  "SessionClosed",
  "SessionExpired",
  "TransportError"
])

/** The exit code and one-line message of a failure of a command. */
export const classify = (error: unknown): ExitCode.Exit => {
  if (error instanceof ExitCode.Exit) return error
  return withCause(classified(error), error)
}

export const withCause = (exit: ExitCode.Exit, cause: unknown): ExitCode.Exit =>
  new ExitCode.Exit({ code: exit.code, message: exit.message, cause })

const classified = (error: unknown): ExitCode.Exit => {
  if (McpError.isMcpError(error)) {
    // A resource error carries its URI in `data` (the server repeats it once, there): say which.
    const uri = (error.data as { readonly uri?: unknown } | undefined)?.uri
    if (typeof uri === "string" && !error.message.includes(uri)) return aboutUri(error, uri)
    return new ExitCode.Exit({
      code: ExitCode.Protocol,
      message: `server error ${error.code}: ${Target.oneLine(error.message)}`
    })
  }
  const tag = (error as { readonly _tag?: unknown })?._tag
  const message = Target.oneLine(String((error as { readonly message?: unknown })?.message ?? error))
  if (typeof tag === "string" && connectionLost.has(tag)) {
    return new ExitCode.Exit({ code: ExitCode.Connection, message: `${tag}: ${message}` })
  }
  return new ExitCode.Exit({
    code: ExitCode.Protocol,
    message: typeof tag === "string" ? `${tag}: ${message}` : message
  })
}

/**
 * The exit code and line of a failure the commands did not expect (a defect):
 * classified like any failure (exit code 4 unless it is a lost connection),
 * a thrown `TypeError` and the like named as such, and never an empty line.
 * main.ts reports a failure around `run` (its telemetry, say) with it too.
 */
export const unexpected = (defect: unknown): ExitCode.Exit => {
  if (defect instanceof ExitCode.Exit) return defect
  const exit = classify(defect)
  // A tagged error's tag is in the line already; a plain `Error` has no name worth saying.
  const name = defect instanceof Error && !("_tag" in defect) && defect.name !== "Error" ? `${defect.name}: ` : ""
  const message = `${name}${exit.message === "" ? "failed without saying why" : exit.message}`
  return withCause(new ExitCode.Exit({ code: exit.code, message }), defect)
}

/** The failures `report` has printed: `run` prints each failure once. */
const reported = new WeakSet<ExitCode.Exit>()

/**
 * Prints a failure on stderr: its line, or with --json one JSON object, so a script reads its fields. The line
 * may quote the server (a JSON-RPC error's message, a stdio server's stderr): its control characters are escaped.
 */
export const report = (json: boolean, exit: ExitCode.Exit): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (reported.has(exit)) return Effect.void
    reported.add(exit)
    if (json) return Console.error(TerminalText.json(Render.errorReport(exit)))
    return exit.message === "" ? Effect.void : Console.error(`effect-mcp: ${TerminalText.line(exit.message)}`)
  })
