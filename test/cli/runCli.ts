/**
 * The `effect-mcp` bin as a real child process, for the CLI tests: run to its
 * end with its output, its exit code and when it printed its first line on
 * stderr, and the one line a failure prints.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"

const cliBin = fileURLToPath(new URL("../../apps/cli/bin/effect-mcp.js", import.meta.url))

/** A finished run. */
export interface Ran {
  /** The exit code; null when it was killed. */
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** When its first line on stderr was complete (Date.now()), if it printed one. */
  readonly erroredAt: number | undefined
  /** Each complete line on stderr and when it was (Date.now()). */
  readonly stderrLines: ReadonlyArray<{ readonly line: string; readonly at: number }>
}

/**
 * Runs `effect-mcp args` to its end. It is killed with the scope, or after `timeoutMs` (60 s by default:
 * only a hung run, even on a loaded machine). `onSpawn` sees the child as soon as it is started; `env` is
 * added to this process's environment.
 */
export const runCli = (
  args: ReadonlyArray<string>,
  options: {
    readonly timeoutMs?: number
    readonly onSpawn?: (child: ChildProcess) => void
    readonly env?: NodeJS.ProcessEnv
  } = {}
): Effect.Effect<Ran> =>
  Effect.callback<Ran>((resume) => {
    const child = spawn(ServerProcess.node, [cliBin, ...args], {
      cwd: ServerProcess.root,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let erroredAt: number | undefined
    const stderrLines: Array<{ readonly line: string; readonly at: number }> = []
    let partial = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
      const at = Date.now()
      if (erroredAt === undefined && stderr.includes("\n")) erroredAt = at
      const parts = (partial + chunk).split("\n")
      partial = parts.pop()!
      for (const line of parts) stderrLines.push({ line, at })
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout, stderr, erroredAt, stderrLines }))
    })
    options.onSpawn?.(child)
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

/** The one line a failure prints on stderr, `effect-mcp: <what went wrong>`, whole. */
export const oneLineError = (ran: Ran): string => {
  const lines = ran.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, `one line expected on stderr, got:\n${ran.stderr}`)
  assert.match(lines[0]!, /^effect-mcp: /)
  return lines[0]!
}

/** The same line without its `effect-mcp: ` prefix. */
export const errorLine = (ran: Ran): string => oneLineError(ran).slice("effect-mcp: ".length)
