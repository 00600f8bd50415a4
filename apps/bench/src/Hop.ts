/**
 * The processes W10 puts between a client and a stdio server: the effect-mcp gateway (`effect-mcp gateway`,
 * the CLI as its users run it, from the workspace's sources) and `mcp-proxy` (its `mcp-proxy` bin, pinned in
 * this package's devDependencies), each serving one stdio upstream over Streamable HTTP on 127.0.0.1 with its
 * defaults otherwise. Both are started with `servers/listenProbe.ts` preloaded, which reports the port once it
 * listens. CPU time is read from `/proc` for any process (every thread's, nanosecond counters), so the
 * front process and the upstream behind it are measured the same way whoever spawned them.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { serverScript } from "./EffectMcp.ts"
import { lines } from "./Lines.ts"

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** The effect-mcp CLI's bin, and mcp-proxy's. */
const bins = {
  gateway: path.join(root, "apps/cli/bin/effect-mcp.js"),
  mcpProxy: path.join(root, "node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs")
}

/** Which front: the effect-mcp gateway or mcp-proxy. */
export type Kind = "gateway" | "mcp-proxy"

/** A running front: its endpoint, its process and the stdio upstream it spawned. */
export interface Front {
  readonly url: string
  /** The front process (gateway or proxy). */
  readonly pid: number
  /** The stdio upstream it spawned. */
  readonly upstreamPid: number
  readonly close: () => Promise<void>
}

/**
 * CPU time (user + system) of every thread of a live process so far, microseconds: the sum of the first field
 * of `/proc/<pid>/task/<tid>/schedstat` (nanoseconds on the CPU).
 */
export const cpuMicros = (pid: number): number => {
  let nanos = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    nanos += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0])
  }
  return nanos / 1000
}

/** The live children of a process (every thread's `children` list). */
export const childrenOf = (pid: number): Array<number> =>
  readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8")
      .split(" ")
      .filter((s) => s.trim() !== "")
      .map(Number)
  )

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The command line of each front, serving `upstream` (a stdio server script run by this Node). */
const commandLine = (kind: Kind, upstream: string, configDir: string): Array<string> => {
  if (kind === "mcp-proxy") {
    return [bins.mcpProxy, "--host", "127.0.0.1", "--port", "0", "--", process.execPath, upstream]
  }
  const config = path.join(configDir, "gateway.json")
  writeFileSync(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [upstream] } } }))
  return [bins.gateway, "gateway", "--config", config, "--port", "0", "--unprefixed", "echo"]
}

/**
 * Starts a gateway or mcp-proxy in front of the stdio server `upstream` (a script under `servers/`) and
 * resolves once it listens and has spawned its upstream. `close` stops it (SIGTERM) and makes sure the
 * upstream is gone too.
 */
export const start = (kind: Kind, upstream: string): Promise<Front> => {
  const configDir = mkdtempSync(path.join(os.tmpdir(), "effect-mcp-bench-w10-"))
  const removeConfig = () => rmSync(configDir, { recursive: true, force: true })
  return new Promise<Front>((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      ["--import", serverScript("listenProbe.ts"), ...commandLine(kind, serverScript(upstream), configDir)],
      { cwd: root, stdio: ["ignore", "pipe", "inherit"] }
    )
    const pid = child.pid!
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`${kind} exited with ${code} before listening`)))
    lines(child.stdout!, (line) => {
      if (!line.startsWith("LISTENING ")) return
      // Both connect to their upstream before they listen: it is their one child by now.
      const children = childrenOf(pid)
      if (children.length !== 1) {
        child.kill()
        reject(new Error(`${kind} has ${children.length} children, not its one upstream`))
        return
      }
      const upstreamPid = children[0]!
      resolve({
        url: line.slice("LISTENING ".length),
        pid,
        upstreamPid,
        close: () =>
          new Promise<void>((done) => {
            child.removeAllListeners("exit")
            child.once("exit", () => {
              if (isAlive(upstreamPid)) process.kill(upstreamPid, "SIGKILL")
              removeConfig()
              done()
            })
            child.kill()
          })
      })
    })
  }).catch((error: unknown) => {
    removeConfig()
    throw error
  })
}
