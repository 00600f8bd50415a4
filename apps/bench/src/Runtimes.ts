/**
 * The effect-mcp echo server on Bun and Deno (W9): `servers/webEcho.ts` (`WebHandler` under `Bun.serve` /
 * `Deno.serve`) as a child process of the runtime's binary (the root devDependencies `bun` and `deno`), from the
 * workspace's sources. Its CPU time is read from `/proc` (Linux), the same measure as the Node servers' own.
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { serverScript } from "./EffectMcp.ts"
import type * as Http from "./Http.ts"
import { lines } from "./Lines.ts"

export type WebRuntime = "bun" | "deno"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const condition = "--conditions=@effect-mcp/source"

const commands: { readonly [R in WebRuntime]: ReadonlyArray<string> } = {
  bun: [condition, serverScript("webEcho.ts")],
  deno: ["run", "--no-prompt", "--allow-net=127.0.0.1", condition, serverScript("webEcho.ts")]
}

/** User + system CPU time of a process so far, microseconds, from `/proc/<pid>/stat` (clock ticks of 10 ms). */
export const procCpu = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  // The fields after the command name (which may hold spaces) start at its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/** Starts the echo server on `runtime` and resolves once it prints its URL. */
export const spawnServer = (runtime: WebRuntime): Promise<Http.Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(`${root}node_modules/.bin/${runtime}`, [...commands[runtime]], {
      cwd: root,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`${runtime} echo server exited with ${code}`)))
    lines(child.stdout!, (line) => {
      if (!line.startsWith("LISTENING ")) return
      const pid = child.pid!
      resolve({
        url: line.slice("LISTENING ".length),
        pid,
        memory: async () => {
          throw new Error(`no memory probe for ${runtime}`)
        },
        cpu: async () => procCpu(pid),
        close: () =>
          new Promise((done) => {
            child.removeAllListeners("exit")
            child.once("exit", () => done())
            child.kill()
          })
      })
    })
  })
