/**
 * What `effect-mcp` talks to: a URL (Streamable HTTP, falling back to legacy
 * SSE), a command given after `--` (spawned, spoken to over stdio), or the
 * name of a server in an `mcpServers` config file. The result is a
 * `McpConfig.ServerConfig`, the entry the host's connector takes.
 */
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as ExitCode from "./ExitCode.ts"

/** A resolved target: its name (for messages) and how to reach it. */
export interface Target {
  readonly name: string
  readonly server: McpConfig.ServerConfig
}

/** The pieces of the command line a target is made of. */
export interface Input {
  /** The first positional argument, when no command follows `--`. */
  readonly target: string | undefined
  /** Everything after `--`: a stdio server's command and its arguments. */
  readonly command: ReadonlyArray<string>
  /** The config file of named servers. */
  readonly config: string
  /** Speak legacy HTTP+SSE to a URL directly. */
  readonly sse: boolean
}

const isUrl = (s: string): boolean => /^https?:\/\//i.test(s)

/** Resolves a target, failing with an exit of code `Target` (or `Usage` when none was given). */
export const resolve = (input: Input): Effect.Effect<Target, ExitCode.Exit, FileSystem.FileSystem> => {
  const [command, ...args] = input.command
  if (command !== undefined) return Effect.succeed({ name: command, server: { command, args } })
  const target = input.target
  if (target === undefined) {
    return Effect.fail(
      new ExitCode.Exit({
        code: ExitCode.Usage,
        message: "no target: give a URL, a server name from the config file, or a command after --"
      })
    )
  }
  if (isUrl(target)) {
    return Effect.succeed({ name: target, server: input.sse ? { type: "sse", url: target } : { url: target } })
  }
  return McpConfig.load(input.config).pipe(
    Effect.mapError(
      (e) =>
        new ExitCode.Exit({
          code: ExitCode.Target,
          // The error names the file already when it was read from one.
          message: e.message.includes(input.config) ? oneLine(e.message) : `${input.config}: ${oneLine(e.message)}`,
          cause: e
        })
    ),
    Effect.flatMap((config) => {
      const server = config.mcpServers[target]
      if (server !== undefined) return Effect.succeed({ name: target, server })
      const names = Object.keys(config.mcpServers)
      return Effect.fail(
        new ExitCode.Exit({
          code: ExitCode.Target,
          message: `no server "${target}" in ${input.config} (${names.length === 0 ? "it has none" : `it has ${names.join(", ")}`}); a URL starts with http:// or https://`
        })
      )
    })
  )
}

/**
 * `text` on one line: the errors go to a terminal or a log, one line each.
 * Lines are joined with "; ", except after a colon (`stderr ends with:` and
 * its lines read `stderr ends with: a; b`); a colon that ends the text (an
 * empty tail) is dropped.
 */
export const oneLine = (text: string): string =>
  text
    .replace(/:\s*\n\s*/g, ": ")
    .replace(/\s*\n\s*/g, "; ")
    .replace(/[\s:;]+$/, "")
    .trim()
