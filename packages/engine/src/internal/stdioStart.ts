/**
 * Why a stdio server process could not be started, in one line: the command
 * and the system error code behind the spawner's failure. The code is what a
 * person acts on (a typo, a missing install, a file that is not executable);
 * the spawner's own message repeats the command and hides it.
 */
import * as Transport from "../Transport.ts"
import * as NetCause from "../NetCause.ts"

/** A pipe's or a spawn's failure in a few words, with its system code (`EPIPE`, `ECONNRESET`, ...). */
export const describe = NetCause.describe

/** The error of a process that could not be started: "failed to start the server process `x`: not found (ENOENT)". */
export const startFailed = (
  options: { readonly command: string; readonly cwd?: string | undefined },
  cause: unknown
): Transport.TransportError => {
  const code = NetCause.codeOf(cause)
  const why =
    code === "ENOENT"
      ? options.cwd === undefined
        ? "not found (ENOENT)"
        : `not found, or its working directory ${JSON.stringify(options.cwd)} does not exist (ENOENT)`
      : code === "EACCES"
        ? "permission denied, not executable (EACCES)"
        : NetCause.describe(cause)
  return new Transport.TransportError({
    reason: "Io",
    message: `failed to start the server process \`${options.command}\`: ${why}`,
    cause
  })
}
