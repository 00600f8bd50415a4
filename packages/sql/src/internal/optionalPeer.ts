/**
 * An optional peer dependency, imported on first use. One that is not
 * installed is a failure that says what to install, not a defect: the caller
 * asked for a feature that needs it (PostgreSQL needs `@effect/sql-pg`), and
 * the person running the program can fix it with one command.
 */
import * as Effect from "effect/Effect"

/**
 * Imports the optional package `name` with `load` (its dynamic import). A
 * failure is `onError` of one line: what needs the package and how to install
 * it when it is not installed, else why it could not be loaded.
 */
export const importOptional = <A, E>(options: {
  readonly name: string
  /** What needs the package, as the line starts: `PostgreSQL`. */
  readonly neededBy: string
  readonly load: () => Promise<A>
  readonly onError: (message: string) => E
}): Effect.Effect<A, E> =>
  Effect.tryPromise({
    try: () => options.load(),
    catch: (cause) => options.onError(whyNot(options.name, options.neededBy, cause))
  })

/** The line for an import of `name` that failed with `cause`. */
const whyNot = (name: string, neededBy: string, cause: unknown): string => {
  const error = cause as { readonly code?: unknown; readonly message?: unknown } | null | undefined
  const message = typeof error?.message === "string" ? error.message : String(cause)
  // Node names the package it did not find, quoted (vitest's loader adds the subpath): this one is not installed.
  // Another name is one of its own dependencies, missing from a broken install: Node's words name it, so they stay.
  const quoted = `'${name}`
  const at = message.indexOf(quoted)
  const named = at !== -1 && ["'", "/"].includes(message.charAt(at + quoted.length))
  if (error?.code === "ERR_MODULE_NOT_FOUND" && named) {
    return `${neededBy} needs the optional package ${name}: npm install ${name}`
  }
  return `${neededBy} needs the optional package ${name}, which could not be loaded: ${firstLine(message)}`
}

const firstLine = (text: string): string => text.split("\n", 1)[0]!.trim()
