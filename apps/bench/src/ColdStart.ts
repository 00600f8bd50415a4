/**
 * Cold start of a stdio server as a client sees it: spawn (this Node) to the
 * answer of `initialize`, sent the moment the process exists. Nothing but
 * the bytes of one request and one response: the same clock for every server.
 * Also counts the modules a start loads (a `--import` hook, in a separate run).
 */
import { spawn } from "node:child_process"
import * as FsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

export interface Server {
  /** The script (or bin) Node runs. */
  readonly script: string
  readonly args?: ReadonlyArray<string> | undefined
}

const initialize = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench-client", version: "1.0.0" } }
})}\n`

const timeoutMs = 30_000

/** One start: wall time and the server's main-thread CPU time, spawn to `initialize` answered. */
export interface Start {
  readonly ms: number
  /**
   * CPU time of the server's main thread (where modules load and run) when the
   * answer arrived, from `/proc/<pid>/schedstat`: far less disturbed than wall
   * time by other processes on a shared machine. NaN where there is no /proc.
   */
  readonly cpuMs: number
}

const mainThreadCpuMs = (pid: number | undefined): number => {
  try {
    return Number(FsSync.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6
  } catch {
    return Number.NaN
  }
}

/**
 * From spawn to the first stdout line holding the answer to `initialize`
 * (checked to be a result), then the child is killed.
 * `env` is the child's whole environment.
 */
export const initializeAnswered = (
  server: Server,
  env: NodeJS.ProcessEnv,
  nodeArgs: ReadonlyArray<string> = []
): Promise<Start> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, [...nodeArgs, server.script, ...(server.args ?? [])], {
      env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let settled = false
    const finish = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      outcome()
      child.kill()
    }
    const timer = setTimeout(
      () => finish(() => reject(new Error(`${server.script}: no answer in ${timeoutMs} ms`))),
      timeoutMs
    )
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk
      const end = stdout.indexOf("\n")
      if (end < 0) return
      const elapsed = performance.now() - start
      const cpuMs = mainThreadCpuMs(child.pid)
      const line = stdout.slice(0, end)
      finish(() => {
        const message = JSON.parse(line) as { readonly id?: unknown; readonly result?: unknown }
        if (message.id === 1 && message.result !== undefined) resolve({ ms: elapsed, cpuMs })
        else reject(new Error(`${server.script}: not an initialize result: ${line.slice(0, 200)}`))
      })
    })
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000)
    })
    child.on("error", (error) => finish(() => reject(error)))
    child.on("exit", (code, signal) =>
      finish(() => reject(new Error(`${server.script} exited (${code ?? signal}) before answering: ${stderr}`)))
    )
    child.stdin.on("error", () => {})
    child.stdin.write(initialize)
  })

/**
 * The modules (JavaScript files, ESM and CommonJS) one start loads up to
 * `initialize` answered: the server started once under the counting hook
 * (`countModulesHook`, see `installed/countModules.mjs`).
 */
export const countModules = async (
  server: Server,
  countModulesHook: string,
  env: NodeJS.ProcessEnv
): Promise<number> => {
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-bench-modules-"))
  const out = Path.join(dir, "modules.json")
  try {
    await initializeAnswered(server, { ...env, EFFECT_MCP_BENCH_MODULES: out }, ["--import", countModulesHook])
    // Written on exit: the child was killed after answering; wait for the file.
    for (let i = 0; i < 100; i++) {
      const text = await Fs.readFile(out, "utf8").catch(() => undefined)
      if (text !== undefined) {
        return (JSON.parse(text) as { readonly files: ReadonlyArray<string> }).files.length
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`${server.script}: no module count written`)
  } finally {
    await Fs.rm(dir, { recursive: true, force: true })
  }
}
