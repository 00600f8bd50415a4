/**
 * workerd (Cloudflare's Workers runtime, the `workerd` devDependency's binary) as a test's child process: Worker
 * fixtures bundled by rolldown into one minified ESM file each, a Cap'n Proto config written beside them in a
 * temporary directory, and `workerd serve` with every socket on 127.0.0.1, port 0. workerd reports the port of
 * each socket on its control descriptor (`--control-fd`) once it listens: the start waits for those events, so no
 * port is guessed. The test's scope stops the process and removes the directory.
 *
 * Fresh isolates: a worker of the config keeps one isolate for every request, so a `fresh` service is a loader
 * Worker that runs its fixture through a Worker Loader binding (`workerLoader`, behind `--experimental`) under a
 * new name for each request: every request is served by an isolate made for it.
 *
 * A Worker's own `fetch` reaches public addresses only by default; a service with `outbound: "loopback"` sends it
 * through a network service that allows the machine's own addresses (a client Worker calling an upstream server
 * the test started on 127.0.0.1).
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Readable } from "node:stream"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { build } from "rolldown"
import * as ServerProcess from "../support/ServerProcess.ts"

/** The binary `npm ci` links for the `workerd` devDependency. */
export const bin = Path.join(ServerProcess.root, "node_modules", ".bin", "workerd")

/** The compatibility date of every Worker (one this workerd supports). */
export const compatibilityDate = "2026-11-01"

/** A service to serve: a Worker fixture, in one isolate (`reused`) or in a new isolate per request (`fresh`). */
export interface Service {
  /** The socket's name: letters and digits only (it names the service in the config too). */
  readonly name: string
  /** The Worker's entry, relative to the repository root (`export default { fetch }`). */
  readonly entry: string
  readonly isolates: "reused" | "fresh"
  /**
   * Where the Worker's global `fetch` may go: workerd's default outbound reaches public addresses only; `loopback`
   * is a network service that reaches 127.0.0.0/8 (an upstream server the test started). Reused isolates only.
   */
  readonly outbound?: "loopback" | undefined
}

/** A running workerd: the `/mcp` URL of each service, by name. */
export interface Workerd {
  readonly urls: Readonly<Record<string, string>>
  readonly process: ServerProcess.Child["process"]
  /** Waits until workerd's stderr (where the Workers' console output goes) has a line matching `pattern`. */
  readonly waitForStderr: ServerProcess.Child["waitForStderr"]
}

/** Bundles `entry` into `<dir>/<name>.mjs`, as a deployed Worker ships: one minified ESM file. */
export const bundle = (entry: string, dir: string, name: string): Promise<string> =>
  build({
    input: Path.join(ServerProcess.root, entry),
    platform: "browser",
    logLevel: "silent",
    // The workspace's TypeScript sources, as the other runtimes run them (no build of the packages).
    resolve: { conditionNames: ["@effect-mcp/source", "workerd", "worker", "browser", "import", "default"] },
    output: { dir, format: "esm", entryFileNames: `${name}.mjs`, codeSplitting: false, minify: true }
  }).then(() => Path.join(dir, `${name}.mjs`))

// Loads the Worker in CODE under a name used once, so the loader makes an isolate for this request alone.
const loaderModule = `let next = 0
export default {
  fetch(request, env) {
    const name = "fresh-" + Date.now() + "-" + next++
    const worker = env.LOADER.get(name, () => ({
      compatibilityDate: "${compatibilityDate}",
      mainModule: "worker.js",
      modules: { "worker.js": { js: env.CODE } }
    }))
    return worker.getEntrypoint().fetch(request)
  }
}
`

/** The network service a Worker with `outbound: "loopback"` fetches through (not a socket: no test names it). */
const loopback = "loopback"

/** The name of a fixture's bundle: its file name without `.ts` (`worker`, `echo-worker`). */
const bundleName = (entry: string): string => Path.basename(entry, ".ts")

/** The Cap'n Proto config serving `services`, each from its fixture's bundle beside it. */
export const config = (services: ReadonlyArray<Service>): string => {
  const worker = (service: Service) =>
    service.isolates === "reused"
      ? `(modules = [(name = "worker.mjs", esModule = embed "${bundleName(service.entry)}.mjs")], ` +
        `${service.outbound === undefined ? "" : `globalOutbound = "${loopback}", `}compatibilityDate = "${compatibilityDate}")`
      : `(modules = [(name = "loader.mjs", esModule = embed "loader.mjs")], ` +
        `bindings = [(name = "LOADER", workerLoader = ()), (name = "CODE", text = embed "${bundleName(service.entry)}.mjs")], ` +
        `compatibilityDate = "${compatibilityDate}")`
  // "local" is 127.0.0.0/8, ::1 and Unix sockets: nothing beyond this machine.
  const network = services.some((s) => s.outbound !== undefined)
    ? [`(name = "${loopback}", network = (allow = ["local"]))`]
    : []
  return [
    'using Workerd = import "/workerd/workerd.capnp";',
    "const config :Workerd.Config = (",
    `  services = [${[...services.map((s) => `(name = "${s.name}", worker = ${worker(s)})`), ...network].join(", ")}],`,
    `  sockets = [${services.map((s) => `(name = "${s.name}", address = "127.0.0.1:0", http = (), service = "${s.name}")`).join(", ")}]`,
    ");",
    ""
  ].join("\n")
}

/**
 * Bundles the fixtures and writes the config serving them into a temporary directory that the scope removes;
 * returns the directory, for `serve`.
 */
export const prepare = (
  services: ReadonlyArray<Service>
): Effect.Effect<string, ServerProcess.ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    if (!existsSync(bin)) {
      return yield* Effect.fail(
        new ServerProcess.ProcessError(`${bin} is missing: the devDependency "workerd" installs it (npm ci)`)
      )
    }
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "effect-mcp-workerd-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    yield* Effect.tryPromise({
      try: () =>
        Promise.all([
          // One bundle per fixture, whichever services serve it.
          ...[...new Set(services.map((s) => s.entry))].map((entry) => bundle(entry, dir, bundleName(entry))),
          Fs.writeFile(Path.join(dir, "loader.mjs"), loaderModule),
          Fs.writeFile(Path.join(dir, "config.capnp"), config(services))
        ]),
      catch: (error) => new ServerProcess.ProcessError(`bundling the Workers failed: ${String(error)}`)
    })
    return dir
  })

/** `prepare`, then `workerd serve` on the config; resolves once every service's socket listens. */
export const start = (
  services: ReadonlyArray<Service>
): Effect.Effect<Workerd, ServerProcess.ProcessError, Scope.Scope> =>
  Effect.flatMap(prepare(services), (dir) =>
    serve(
      dir,
      services.map((s) => s.name)
    )
  )

/** `workerd serve <dir>/config.capnp` in the scope; resolves once every socket in `sockets` listens. */
export const serve = (
  dir: string,
  sockets: ReadonlyArray<string>
): Effect.Effect<Workerd, ServerProcess.ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        // --verbose: the Workers' console output reaches stderr (a test waits there for what a Worker says).
        spawn(bin, ["serve", "--experimental", "--verbose", "--control-fd=3", "config.capnp"], {
          cwd: dir,
          stdio: ["ignore", "pipe", "pipe", "pipe"]
        })
      ),
      ServerProcess.terminate
    )
    const stderr = ServerProcess.record(child.stderr, "workerd's stderr")
    child.stdout?.resume()
    const control = ServerProcess.record(child.stdio[3] as Readable, "workerd's control descriptor")
    child.once("error", (error) => control.end(`workerd failed to start (${error.message})`))
    const urls: Record<string, string> = {}
    for (const socket of sockets) {
      const listening = yield* ServerProcess.waitFor(
        control,
        new RegExp(`\\{"event":"listen","socket":"${socket}","port":(\\d+)\\}`)
      ).pipe(
        Effect.mapError((error) => new ServerProcess.ProcessError(`${error.message}\nworkerd's stderr:\n${stderr()}`))
      )
      urls[socket] = `http://127.0.0.1:${listening[1]}/mcp`
    }
    return {
      urls,
      process: child,
      waitForStderr: (pattern: RegExp, timeoutMs?: number) => ServerProcess.waitFor(stderr, pattern, timeoutMs)
    }
  })
