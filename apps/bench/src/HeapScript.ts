/**
 * Measurements that need what a test worker does not have (`gc`, V8's
 * natives syntax): a script measures in a Node process of its own started
 * with `--expose-gc` (`SessionCloseHeap.ts`, `ClientSessionHeap.ts`) and
 * any other flags, and prints one JSON line; a test runs it with `run` and
 * checks what it printed.
 */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"

/** The heap after full collections (a second one takes what the first one's finalizers let go). */
export const heapAfterGc = (): number => {
  const gc = (globalThis as { readonly gc?: () => void }).gc
  if (gc === undefined) throw new Error("run with node --expose-gc")
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/**
 * Runs `script` (a path) with this Node, `gc` exposed (and any other V8
 * `flags`) and the workspace's sources resolved, and succeeds with the JSON
 * it printed once it exits.
 */
export const run = <A>(script: string, flags: ReadonlyArray<string> = []): Effect.Effect<A, Error> =>
  Effect.callback<A, Error>((resume) => {
    const nodeOptions = process.env["NODE_OPTIONS"] ?? ""
    const child = execFile(
      process.execPath,
      ["--expose-gc", ...flags, script],
      {
        env: {
          ...process.env,
          NODE_OPTIONS: nodeOptions.includes("@effect-mcp/source")
            ? nodeOptions
            : `${nodeOptions} --conditions=@effect-mcp/source`
        }
      },
      (error, stdout, stderr) =>
        resume(
          error === null
            ? Effect.succeed(JSON.parse(stdout) as A)
            : Effect.fail(new Error(`${script} failed: ${error.message}\n${stderr}`))
        )
    )
    return Effect.sync(() => child.kill())
  })
