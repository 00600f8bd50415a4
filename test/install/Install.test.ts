/**
 * The packages as a user gets them, from a registry (the set-up is ./Consumers.ts): a private npm registry
 * (Verdaccio, test/support/Registry.ts) starts on 127.0.0.1, `scripts/publish.ts` publishes every package to it as a
 * release does, and npm installs them by name into empty projects in the OS temp folder, outside the workspace:
 *
 * - `server`, the README's Install line for a server: a plain `.mjs` echo server answers the official SDK client
 *   over stdio and over Streamable HTTP; shipped by the recipe of docs/shipping.md (`examples/shipping/`: bundled
 *   by rolldown, started by a launcher that turns Node's compile cache on), it runs from a folder of its own with
 *   no `node_modules` and answers the official SDK client over stdio;
 * - `client`, the README's line for a client: a plain `.mjs` McpClient calls the everything server, started by
 *   `npx @effect-mcp/everything-server`, over stdio and over Streamable HTTP;
 * - `npx @effect-mcp/cli tools -- npx @effect-mcp/everything-server --stdio` lists the everything server's tools;
 * - `full`, every package: each points only at built JavaScript, `tsc --noEmit` type-checks a consumer `.ts` file
 *   and the example of each package's README against the installed `.d.ts`, the bin runs on a plain Node.
 *
 * Every program runs with NODE_OPTIONS replaced by `--no-experimental-strip-types`: no workspace condition leaks in,
 * and a `.ts` file reached at run time fails.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { type Published, publishAll } from "../../scripts/publish.ts"
import * as SdkClient from "../interop/sdkClient.ts"
import type * as Registry from "../support/Registry.ts"
import { makeRecorder, root, terminate, waitFor } from "../support/ServerProcess.ts"
import {
  cleanEnv,
  describeRun,
  makeProject,
  node,
  type Project,
  publishToRegistry,
  readmeInstall,
  run,
  versionOf,
  writeReadmeExamples
} from "./Consumers.ts"

// A check's limit covers the install it awaits (npm's own is 300 s) and its programs, installed by npx at first;
// they take a minute, several on a loaded machine: the limit only catches a hang.
const checkLimit = 480_000

/** What beforeAll made: the registry, what was published to it, and the projects, installing or installed. */
interface SetUp {
  readonly registry: Registry.Registry
  readonly published: ReadonlyArray<Published>
  /** `server` and `client` (the README's lines), `full` (every package), `empty` (nothing: npx runs there). */
  readonly projects: Readonly<Record<"server" | "client" | "full" | "empty", Promise<Project>>>
}

const scope = Effect.runSync(Scope.make())
let tempDir: string | undefined
let setUp: SetUp | undefined

/** Publishes every package to a registry started in `dir`, and starts each project's install there too. */
const makeSetUp = async (dir: string): Promise<SetUp> => {
  const { registry, published } = await publishToRegistry(dir, scope)
  const lines = await Promise.all([readmeInstall("@effect-mcp/server"), readmeInstall("@effect-mcp/client")])
  // The versions the workspace is tested with. (npm 11 also loops without end resolving a bare
  // `@effect/platform-node` next to the apps, which depend on it where the libraries take it as a peer.)
  const pinned = ["effect", "@effect/platform-node", "@types/node"].map((name) => `${name}@${versionOf(name)}`)
  // Each an ES module package, as docs/getting-started.md sets one up.
  const make = (name: string, packages: ReadonlyArray<string>, files: ReadonlyArray<string>) =>
    makeProject(dir, registry, { name, version: "1.0.0", private: true, type: "module" }, packages, files)
  // Not awaited here: each check starts once the project it needs is installed (the longest install first).
  const projects = {
    full: make("full", [...published.map((p) => p.name), ...pinned], ["consumer.ts", "tsconfig.json"]).then((full) =>
      writeReadmeExamples(full, published)
    ),
    server: make("server", lines[0], ["server.mjs"]),
    client: make("client", lines[1], ["client.mjs"]),
    empty: make("empty", [], [])
  }
  // A failed install fails the checks that await it; this only keeps it from being reported unhandled before.
  for (const installing of Object.values(projects)) installing.catch(() => {})
  return { registry, published, projects }
}

const done = (): SetUp => {
  if (setUp === undefined || tempDir === undefined) throw new Error("the set-up in beforeAll failed")
  return setUp
}

/** The project `name` once installed (its install failing fails the test). */
const installed = (name: keyof SetUp["projects"]) => Effect.promise(() => done().projects[name])

/** Files under `dir`, recursively. */
const filesUnder = async (dir: string): Promise<ReadonlyArray<string>> =>
  (await fs.readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))

/** Every string an `exports` / `imports` / `bin` value points at. */
const targetsOf = (value: unknown): ReadonlyArray<string> =>
  typeof value === "string"
    ? [value]
    : value !== null && typeof value === "object"
      ? Object.values(value).flatMap(targetsOf)
      : []

/** Terminates `child` and every process of its group: npx leaves the server it started running when only npx goes. */
const terminateGroup = (child: ChildProcess): Effect.Effect<void> =>
  Effect.gen(function* () {
    const signal = (name: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, name)
      } catch {
        // The group is gone already.
      }
    }
    signal("SIGTERM")
    yield* terminate(child)
    signal("SIGKILL")
  })

/**
 * Spawns `command args --http` in `project`, the leader of a process group of its own, owned by the test's scope;
 * its endpoint once it listens, a failure as soon as it exits.
 */
const spawnHttpServer = (project: Project, command: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(command, [...args, "--http"], {
        cwd: project.dir,
        env: project.env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true
      })
      // serveHttp logs its URL with Effect's default logger (stdout over HTTP); errors go to stderr.
      const output = makeRecorder()
      for (const stream of [child.stdout, child.stderr]) {
        stream.setEncoding("utf8")
        stream.on("data", (chunk: string) => output.append(chunk))
      }
      child.on("close", (code, signal) => output.end(`${command} ${args.join(" ")} exited (${code ?? signal})`))
      return { child, output }
    }),
    ({ child }) => terminateGroup(child)
  ).pipe(
    // An npx start may install the server first: minutes on a loaded machine, and the limit only catches a hang.
    Effect.flatMap(({ output }) =>
      waitFor(output, /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/, 180_000).pipe(Effect.map((match) => match[1]!))
    )
  )

/** The package specifiers (neither relative nor `node:`) a bundle's `.mjs` files import. */
const packageImportsOf = async (dir: string): Promise<ReadonlyArray<string>> => {
  const specifiers: Array<string> = []
  for (const file of await filesUnder(dir)) {
    const text = await fs.readFile(file, "utf8")
    const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
    for (const [, specifier] of code.matchAll(/(?:\bfrom|^import|\bimport\()\s*["']([^"']+)["']/gm)) {
      if (!specifier!.startsWith(".") && !specifier!.startsWith("node:")) specifiers.push(specifier!)
    }
  }
  return specifiers
}

/** The text of the first content block of a tool result. */
const textOf = (result: SdkClient.Json): string => result.content[0].text

/** Starts the installed echo server (or a shipped build of it) for the SDK client, which lists and calls `echo`. */
const echoesOverStdio = (
  start: { readonly args: ReadonlyArray<string>; readonly cwd: string; readonly env: NodeJS.ProcessEnv },
  text: string
) =>
  Effect.gen(function* () {
    const transport = new StdioClientTransport({
      command: node,
      args: [...start.args],
      cwd: start.cwd,
      env: start.env as Record<string, string>,
      stderr: "pipe"
    })
    const { client } = yield* SdkClient.connect(transport)
    assert.strictEqual(client.getServerVersion()?.name, "installed-echo")
    const tools = yield* Effect.promise(() => client.listTools())
    assert.deepStrictEqual(
      tools.tools.map((tool) => tool.name),
      ["echo"]
    )
    const result = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text } }))
    assert.strictEqual(textOf(result), `echo: ${text}`)
  })

/** Runs `client.mjs` of the client project with `args`; checks what it saw of the everything server. */
const clientSeesEverything = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { dir, env } = yield* installed("client")
    // The server it starts may be installed by npx first: the limit only catches a hang.
    const result = yield* Effect.promise(() =>
      run(node, ["client.mjs", ...args], { cwd: dir, env, timeoutMs: 240_000 })
    )
    assert.strictEqual(result.code, 0, describeRun(`client.mjs ${args.join(" ")}`, result))
    const seen = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "")
    assert.strictEqual(seen.server, "effect-mcp-everything-server")
    assert.include(seen.tools, "test_simple_text")
    assert.deepStrictEqual(seen.content, [{ type: "text", text: "This is a simple text response for testing." }])
  })

// The checks share the one set-up (made once, in beforeAll) and touch nothing of each other's (each its own
// files and processes), so they run at once: most of their time is waiting on child processes.
describe.concurrent("packages published to a registry, installed by name outside the workspace", () => {
  // Start, build and publish take seconds alone, minutes on a loaded machine: the limit only catches a hang.
  beforeAll(async () => {
    tempDir = await fs.mkdtemp(path.join(os.tmpdir(), "effect-mcp-install-"))
    assert.isTrue(path.relative(root, tempDir).startsWith(".."), `${tempDir} must be outside ${root}`)
    setUp = await makeSetUp(tempDir)
  }, 600_000)

  afterAll(async () => {
    // No npm still writing into the folder about to go (a check filtered out leaves its install unawaited).
    if (setUp !== undefined) await Promise.allSettled(Object.values(setUp.projects))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    if (tempDir !== undefined) await fs.rm(tempDir, { recursive: true, force: true })
  })

  it.live(
    "every package is published and installed by name from the registry, pointing only at built JavaScript",
    () =>
      Effect.gen(function* () {
        const { registry, published } = done()
        const full = yield* installed("full")
        // Every publishable package, in dependency order.
        const expected =
          "protocol engine http server client auth platform-node host gateway sql cluster testing everything-server cli"
        assert.deepStrictEqual(
          published.map((p) => p.name),
          expected.split(" ").map((name) => `@effect-mcp/${name}`)
        )
        // Every package came from a registry, not a tarball or a folder; every @effect-mcp one from this registry.
        const lock = JSON.parse(
          yield* Effect.promise(() => fs.readFile(path.join(full.dir, "package-lock.json"), "utf8"))
        )
        for (const [where, { resolved }] of Object.entries<{ resolved?: string }>(lock.packages)) {
          if (where === "") continue
          assert.match(resolved ?? "", /^https?:\/\//, `${where} resolved from ${resolved}`)
          if (where.includes("node_modules/@effect-mcp/")) assert.isTrue(resolved!.startsWith(registry.url), where)
        }
        for (const { name } of published) {
          const pkgDir = path.join(full.dir, "node_modules", name)
          const manifest = JSON.parse(
            yield* Effect.promise(() => fs.readFile(path.join(pkgDir, "package.json"), "utf8"))
          )
          const targets = [...targetsOf(manifest.exports), ...targetsOf(manifest.imports), ...targetsOf(manifest.bin)]
          for (const target of targets) {
            assert.notMatch(target, /(?<!\.d)\.ts$|\/src\//, `${name} exports ${target}`)
            if (!target.includes("*"))
              assert.isTrue(existsSync(path.join(pkgDir, target)), `${name}: ${target} missing`)
          }
          // The workspace manifests declare no engines (npm ci on another Node would warn per package); the
          // published ones say which Node the built JavaScript runs on.
          assert.deepStrictEqual(manifest.engines, { node: ">=22.19.0" }, `${name} engines`)
          assert.isTrue(existsSync(path.join(pkgDir, "LICENSE")), `${name} has no LICENSE`)
          assert.isTrue(existsSync(path.join(pkgDir, "README.md")), `${name} has no README.md`)
          const built = (yield* Effect.promise(() => filesUnder(path.join(pkgDir, "dist")))).filter((file) =>
            /\.(?:js|d\.ts)$/.test(file)
          )
          assert.isAbove(built.length, 0, `${name} has no dist`)
          const declared = new Set([
            name,
            ...Object.keys(manifest.dependencies ?? {}),
            ...Object.keys(manifest.peerDependencies ?? {})
          ])
          for (const file of built) {
            const text = yield* Effect.promise(() => fs.readFile(file, "utf8"))
            assert.notMatch(text, /["']\.{1,2}\/[^"'\n]*(?<!\.d)\.ts["']/, `a .ts specifier in ${file}`)
            // Every package the built code imports is one the manifest declares (a consumer installs nothing else).
            const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
            for (const [, specifier] of code.matchAll(/(?:from|import|import\()\s*["']([^"'.#][^"']*)["']/g)) {
              if (specifier!.startsWith("node:")) continue
              const pkg = specifier!
                .split("/")
                .slice(0, specifier!.startsWith("@") ? 2 : 1)
                .join("/")
              assert.isTrue(declared.has(pkg), `${file} imports ${specifier}, which ${name} does not declare`)
            }
          }
        }
      }),
    checkLimit
  )

  it.live(
    "publishing again is idempotent: a version the registry holds with the same tarball counts as published",
    () =>
      Effect.gen(function* () {
        const { registry, published } = done()
        // npm re-sends a publish whose reply it lost, and a release re-run goes on after a failure: the registry
        // refuses each second copy (EPUBLISHCONFLICT), which is the same tarball, so nothing fails.
        const again = yield* Effect.promise(() => publishAll({ registry: registry.url, env: registry.publisherEnv }))
        assert.deepStrictEqual(again, published)
      }),
    checkLimit
  )

  it.live(
    "tsc --noEmit type-checks a consumer and the README examples against the installed .d.ts",
    () =>
      Effect.gen(function* () {
        const { published } = done()
        const { dir } = yield* installed("full")
        const readmes = (yield* Effect.promise(() => fs.readdir(dir))).filter((file) => file.startsWith("readme-"))
        assert.isAtLeast(readmes.length, published.length, "every package's README has a TypeScript example")
        const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")
        const result = yield* Effect.promise(() =>
          run(node, [tsc, "-p", "tsconfig.json"], { cwd: dir, env: cleanEnv(), timeoutMs: 240_000 })
        )
        assert.strictEqual(result.code, 0, describeRun("tsc --noEmit", result))
      }),
    checkLimit
  )

  it.live(
    "a plain .mjs server answers the official SDK client over stdio; its install holds no OAuth code",
    () =>
      Effect.gen(function* () {
        const { dir, env } = yield* installed("server")
        yield* echoesOverStdio({ args: ["server.mjs", "--stdio"], cwd: dir, env }, "over stdio")
        // @effect-mcp/auth is an optional peer of platform-node: a server without authorization gets none of it.
        for (const name of ["@effect-mcp/auth", "jose", "oauth4webapi"])
          assert.isFalse(existsSync(path.join(dir, "node_modules", name)), `${name} is installed`)
      }),
    checkLimit
  )

  it.live(
    "a plain .mjs server answers the official SDK client over Streamable HTTP",
    () =>
      Effect.gen(function* () {
        const url = yield* spawnHttpServer(yield* installed("server"), node, ["server.mjs"])
        const { client } = yield* SdkClient.connect(new StreamableHTTPClientTransport(new URL(url)))
        assert.strictEqual(client.getServerVersion()?.name, "installed-echo")
        const result = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "over HTTP" } }))
        assert.strictEqual(textOf(result), "echo: over HTTP")
      }),
    checkLimit
  )

  it.live(
    "the echo server shipped by the examples/shipping recipe runs alone and answers the official SDK client",
    () =>
      Effect.gen(function* () {
        const { dir, env } = yield* installed("server")
        // The recipe's files next to the user's server in the project, then the recipe's command, run there.
        const recipe = path.join(dir, "shipping")
        yield* Effect.promise(async () => {
          await fs.cp(path.join(root, "examples", "shipping"), recipe, { recursive: true })
          await fs.copyFile(path.join(dir, "server.mjs"), path.join(recipe, "server.mjs"))
        })
        const rolldown = path.join(root, "node_modules", "rolldown", "bin", "cli.mjs")
        const built = yield* Effect.promise(() =>
          run(node, [rolldown, "-c", "rolldown.config.mjs"], { cwd: recipe, env: cleanEnv() })
        )
        assert.strictEqual(built.code, 0, describeRun("rolldown -c rolldown.config.mjs", built))
        // What ships is the launcher and the bundle, copied where no node_modules can be found.
        const shipped = path.join(tempDir!, "shipped")
        yield* Effect.promise(async () => {
          for (const part of ["bin", "dist"]) {
            await fs.cp(path.join(recipe, part), path.join(shipped, part), { recursive: true })
          }
        })
        assert.deepStrictEqual(yield* Effect.promise(() => packageImportsOf(path.join(shipped, "dist"))), [])
        // No NODE_COMPILE_CACHE: only the launcher can turn the cache on, in its default place under TMPDIR.
        const tmp = path.join(tempDir!, "tmp")
        yield* Effect.promise(() => fs.mkdir(tmp))
        const { NODE_COMPILE_CACHE: _cache, NODE_DISABLE_COMPILE_CACHE: _disabled, ...noCacheSetting } = env
        const launcher = [path.join(shipped, "bin", "server.mjs"), "--stdio"]
        yield* Effect.scoped(
          echoesOverStdio({ args: launcher, cwd: shipped, env: { ...noCacheSetting, TMPDIR: tmp } }, "shipped")
        )
        // The server exited when the client closed its stdin, and Node wrote the compile cache on the way out.
        const cached = yield* Effect.promise(() => filesUnder(path.join(tmp, "node-compile-cache")).catch(() => []))
        assert.isAbove(cached.length, 0, "the launcher turned the compile cache on")
      }),
    checkLimit
  )

  it.live(
    "a plain .mjs McpClient calls `npx @effect-mcp/everything-server --stdio`",
    () => clientSeesEverything(["--stdio", "npx", "@effect-mcp/everything-server", "--stdio"]),
    checkLimit
  )

  it.live(
    "a plain .mjs McpClient calls `npx @effect-mcp/everything-server --http` over Streamable HTTP",
    () =>
      Effect.gen(function* () {
        const everything = ["@effect-mcp/everything-server", "--port", "0"]
        const url = yield* spawnHttpServer(yield* installed("empty"), "npx", everything)
        yield* clientSeesEverything(["--http", url])
      }),
    checkLimit
  )

  it.live(
    "npx @effect-mcp/cli lists the tools of npx @effect-mcp/everything-server over stdio",
    () =>
      Effect.gen(function* () {
        const { dir, env } = yield* installed("empty")
        // `--timeout`: the handshake waits while the inner npx installs the server (30 s by default).
        const args = ["@effect-mcp/cli", "tools", "--json", "--timeout", "180", "--"]
        const result = yield* Effect.promise(() =>
          run("npx", [...args, "npx", "@effect-mcp/everything-server", "--stdio"], {
            cwd: dir,
            env,
            timeoutMs: 240_000
          })
        )
        assert.strictEqual(result.code, 0, describeRun("npx @effect-mcp/cli tools", result))
        const names = (JSON.parse(result.stdout) as { tools: ReadonlyArray<{ name: string }> }).tools.map((t) => t.name)
        assert.include(names, "test_simple_text")
      }),
    checkLimit
  )

  it.live(
    "the installed bin runs on a plain node from PATH, or says in one line that it needs Node 22.19",
    () =>
      Effect.gen(function* () {
        const { dir } = yield* installed("full")
        const bin = path.join(dir, "node_modules/@effect-mcp/everything-server/bin/mcp-everything-server.js")
        // The first `node` on PATH that is not this repository's pinned Node 24 (the system's, if any).
        const plainNode = (process.env.PATH ?? "")
          .split(path.delimiter)
          .filter((entry) => entry !== "" && path.relative(root, path.resolve(entry)).startsWith(".."))
          .map((entry) => path.join(entry, "node"))
          .find((candidate) => existsSync(candidate) && path.dirname(candidate) !== path.dirname(node))
        // Without another Node, this repository's Node stands in: the bin must run there too.
        const nodeForBin = plainNode ?? node
        const env = { ...cleanEnv(), PATH: process.env.PATH ?? "" }
        const version = yield* Effect.promise(() => run(nodeForBin, ["--version"], { cwd: dir, env }))
        const [major, minor] = version.stdout.trim().replace(/^v/, "").split(".").map(Number) as [number, number]
        const result = yield* Effect.promise(() => run(nodeForBin, [bin, "--bogus"], { cwd: dir, env }))
        if (major < 22 || (major === 22 && minor < 19)) {
          assert.strictEqual(result.code, 1, describeRun(`the bin on Node ${major}.${minor}`, result))
          assert.strictEqual(
            result.stderr,
            `mcp-everything-server needs Node.js 22.19 or newer (this is ${version.stdout.trim()})\n`
          )
        } else {
          // A bad command line: the built server starts, reports the usage and exits with 2.
          assert.strictEqual(result.code, 2, describeRun(`the bin on Node ${major}.${minor}`, result))
          assert.match(result.stderr, /usage: mcp-everything-server --stdio/)
        }
      }),
    checkLimit
  )
})
