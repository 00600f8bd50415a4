/**
 * The packages as a user gets them: `scripts/pack.ts` builds and packs every
 * publishable package, the tarballs are installed (with `effect`,
 * `@effect/platform-node` and `@types/node` from the registry) into a fresh
 * project in the OS temp folder, outside the workspace, and there:
 *
 * - `tsc --noEmit` type-checks a consumer `.ts` file, and the example of each
 *   package's README, against the installed `.d.ts`;
 * - a plain `.mjs` echo server answers the official SDK client over stdio and
 *   over Streamable HTTP;
 * - a plain `.mjs` McpClient calls the installed `mcp-everything-server --stdio`;
 * - that echo server, shipped by the recipe of docs/shipping.md (`examples/shipping/`: bundled by rolldown,
 *   started by a launcher that turns Node's compile cache on), runs from a folder of its own with no
 *   `node_modules` and answers the official SDK client over stdio.
 *
 * Every child runs with NODE_OPTIONS replaced by `--no-experimental-strip-types`:
 * no workspace condition leaks in, and a `.ts` file reached at run time fails.
 */
import { execFile, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import { type Packed, packAll } from "../../scripts/pack.ts"
import * as SdkClient from "../interop/sdkClient.ts"
import { makeRecorder, root, terminate, waitFor } from "../support/ServerProcess.ts"

const fixture = fileURLToPath(new URL("fixture/", import.meta.url))
const rootManifest = JSON.parse(await fs.readFile(path.join(root, "package.json"), "utf8")) as {
  readonly dependencies: Record<string, string>
  readonly devDependencies: Record<string, string>
}
const versionOf = (name: string) => rootManifest.dependencies[name] ?? rootManifest.devDependencies[name]

/** The Node running the tests (the project's Node 24); the temp project's programs run on it. */
const node = process.execPath

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `command args` to completion (bounded by `timeoutMs`), never failing: the result says how it went. */
const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly timeoutMs?: number }
): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolve({ code, stdout, stderr })
      }
    )
  })

const describeRun = (what: string, result: Run) =>
  `${what} exited with ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`

/** This environment without npm's per-script variables and without NODE_OPTIONS (the workspace's condition). */
const cleanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (name === "NODE_OPTIONS" || name.startsWith("npm_") || name === "INIT_CWD") continue
    env[name] = value
  }
  return env
}

interface Project {
  readonly dir: string
  readonly packed: ReadonlyArray<Packed>
  /** For the project's programs: no type stripping; this Node, then the installed bins, first on PATH. */
  readonly env: NodeJS.ProcessEnv
}

let project: Project | undefined
let tempDir: string | undefined

const setUp = async (): Promise<Project> => {
  tempDir = await fs.mkdtemp(path.join(os.tmpdir(), "effect-mcp-install-"))
  assert.isTrue(path.relative(root, tempDir).startsWith(".."), `${tempDir} must be outside ${root}`)
  const packed = await packAll(path.join(tempDir, "tarballs"))
  const dir = path.join(tempDir, "consumer")
  await fs.mkdir(dir)
  await fs.writeFile(
    path.join(dir, "package.json"),
    `${JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2)}\n`
  )
  for (const file of ["consumer.ts", "server.mjs", "client.mjs", "tsconfig.json"]) {
    await fs.copyFile(path.join(fixture, file), path.join(dir, file))
  }
  const registry = ["effect", "@effect/platform-node", "@types/node"].map((name) => `${name}@${versionOf(name)}`)
  const install = await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packed.map((p) => p.tarball), ...registry],
    { cwd: dir, env: cleanEnv(), timeoutMs: 240_000 }
  )
  assert.strictEqual(install.code, 0, describeRun("npm install", install))
  // Each installed README's TypeScript example joins the consumer in the type check.
  for (const { name } of packed) {
    const readme = await fs.readFile(path.join(dir, "node_modules", name, "README.md"), "utf8").catch(() => "")
    for (const [index, [, code]] of [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].entries()) {
      await fs.writeFile(path.join(dir, `readme-${name.split("/")[1]}-${index}.ts`), code!)
    }
  }
  const env: NodeJS.ProcessEnv = {
    ...cleanEnv(),
    NODE_OPTIONS: "--no-experimental-strip-types",
    PATH: [path.dirname(node), path.join(dir, "node_modules", ".bin"), process.env.PATH ?? ""].join(path.delimiter)
  }
  return { dir, packed, env }
}

/** The test's temporary folder (the consumer project is inside it). */
const installedTemp = (): string => {
  if (tempDir === undefined) throw new Error("the install in beforeAll failed")
  return tempDir
}

const installed = (): Project => {
  if (project === undefined) throw new Error("the install in beforeAll failed")
  return project
}

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

/** Spawns `node server.mjs --http` in the project; its endpoint once it listens, a failure as soon as it exits. */
const spawnHttpServer = Effect.acquireRelease(
  Effect.sync(() => {
    const { dir, env } = installed()
    const child = spawn(node, ["server.mjs", "--http"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] })
    // serveHttp logs its URL with Effect's default logger (stdout over HTTP); errors go to stderr.
    const output = makeRecorder()
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding("utf8")
      stream.on("data", (chunk: string) => output.append(chunk))
    }
    child.on("close", (code, signal) => output.end(`server.mjs --http exited (${code ?? signal})`))
    return { child, output }
  }),
  ({ child }) => terminate(child)
).pipe(
  Effect.flatMap(({ output }) =>
    waitFor(output, /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/, 60_000).pipe(Effect.map((match) => match[1]!))
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

// The checks share the one install (made once, in beforeAll) and touch nothing of each other's (each its own
// files and processes), so they run at once: most of their time is waiting on child processes.
describe.concurrent("installed packages (npm pack, npm install outside the workspace)", () => {
  // Build, pack and install take a minute alone, several on a loaded machine: the limit only catches a hang.
  beforeAll(async () => {
    project = await setUp()
  }, 600_000)

  afterAll(async () => {
    if (tempDir !== undefined) await fs.rm(tempDir, { recursive: true, force: true })
  })

  it.live(
    "every publishable package is packed and installed, pointing only at built JavaScript",
    () =>
      Effect.gen(function* () {
        const { dir, packed } = installed()
        assert.deepStrictEqual(
          packed.map((p) => p.name),
          [
            "@effect-mcp/protocol",
            "@effect-mcp/engine",
            "@effect-mcp/http",
            "@effect-mcp/server",
            "@effect-mcp/client",
            "@effect-mcp/auth",
            "@effect-mcp/platform-node",
            "@effect-mcp/host",
            "@effect-mcp/sql",
            "@effect-mcp/cluster",
            "@effect-mcp/testing",
            "@effect-mcp/everything-server",
            "@effect-mcp/cli"
          ]
        )
        for (const { name } of packed) {
          const pkgDir = path.join(dir, "node_modules", name)
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
          assert.deepStrictEqual(manifest.engines, { node: ">=22" }, `${name} engines`)
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
    120_000
  )

  it.live(
    "tsc --noEmit type-checks a consumer and the README examples against the installed .d.ts",
    () =>
      Effect.gen(function* () {
        const { dir, packed } = installed()
        const readmes = (yield* Effect.promise(() => fs.readdir(dir))).filter((file) => file.startsWith("readme-"))
        assert.isAtLeast(readmes.length, packed.length, "every package's README has a TypeScript example")
        const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")
        const result = yield* Effect.promise(() =>
          run(node, [tsc, "-p", "tsconfig.json"], { cwd: dir, env: cleanEnv(), timeoutMs: 240_000 })
        )
        assert.strictEqual(result.code, 0, describeRun("tsc --noEmit", result))
      }),
    // The longest check (type-checking every installed .d.ts), beside the others: a loaded machine takes its time.
    240_000
  )

  it.live(
    "a plain .mjs server answers the official SDK client over stdio",
    () =>
      Effect.gen(function* () {
        const { dir, env } = installed()
        yield* echoesOverStdio({ args: ["server.mjs", "--stdio"], cwd: dir, env }, "over stdio")
      }),
    120_000
  )

  it.live(
    "a plain .mjs server answers the official SDK client over Streamable HTTP",
    () =>
      Effect.gen(function* () {
        const url = yield* spawnHttpServer
        const { client } = yield* SdkClient.connect(new StreamableHTTPClientTransport(new URL(url)))
        assert.strictEqual(client.getServerVersion()?.name, "installed-echo")
        const result = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "over HTTP" } }))
        assert.strictEqual(textOf(result), "echo: over HTTP")
      }),
    120_000
  )

  it.live(
    "the echo server shipped by the examples/shipping recipe runs alone and answers the official SDK client",
    () =>
      Effect.gen(function* () {
        const { dir, env } = installed()
        // The recipe's files next to the user's server in the project, then the recipe's command, run there.
        const project = path.join(dir, "shipping")
        yield* Effect.promise(async () => {
          await fs.cp(path.join(root, "examples", "shipping"), project, { recursive: true })
          await fs.copyFile(path.join(dir, "server.mjs"), path.join(project, "server.mjs"))
        })
        const rolldown = path.join(root, "node_modules", "rolldown", "bin", "cli.mjs")
        const built = yield* Effect.promise(() =>
          run(node, [rolldown, "-c", "rolldown.config.mjs"], { cwd: project, env: cleanEnv() })
        )
        assert.strictEqual(built.code, 0, describeRun("rolldown -c rolldown.config.mjs", built))
        // What ships is the launcher and the bundle, copied where no node_modules can be found.
        const shipped = path.join(installedTemp(), "shipped")
        yield* Effect.promise(async () => {
          for (const part of ["bin", "dist"]) {
            await fs.cp(path.join(project, part), path.join(shipped, part), { recursive: true })
          }
        })
        assert.deepStrictEqual(yield* Effect.promise(() => packageImportsOf(path.join(shipped, "dist"))), [])
        // No NODE_COMPILE_CACHE: only the launcher can turn the cache on, in its default place under TMPDIR.
        const tmp = path.join(installedTemp(), "tmp")
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
    120_000
  )

  it.live(
    "a plain .mjs McpClient calls the installed mcp-everything-server over stdio",
    () =>
      Effect.gen(function* () {
        const { dir, env } = installed()
        const result = yield* Effect.promise(() => run(node, ["client.mjs"], { cwd: dir, env }))
        assert.strictEqual(result.code, 0, describeRun("client.mjs", result))
        const seen = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "")
        assert.strictEqual(seen.server, "effect-mcp-everything-server")
        assert.include(seen.tools, "test_simple_text")
        assert.deepStrictEqual(seen.content, [{ type: "text", text: "This is a simple text response for testing." }])
      }),
    120_000
  )

  it.live(
    "the installed effect-mcp lists the tools of the installed mcp-everything-server over stdio",
    () =>
      Effect.gen(function* () {
        const { dir, env } = installed()
        const bin = path.join(dir, "node_modules", "@effect-mcp", "cli", "bin", "effect-mcp.js")
        const result = yield* Effect.promise(() =>
          run(node, [bin, "tools", "--json", "--", "mcp-everything-server", "--stdio"], { cwd: dir, env })
        )
        assert.strictEqual(result.code, 0, describeRun("effect-mcp tools", result))
        const names = (JSON.parse(result.stdout) as { tools: ReadonlyArray<{ name: string }> }).tools.map((t) => t.name)
        assert.include(names, "test_simple_text")
      }),
    120_000
  )

  it.live(
    "the installed bin runs on a plain node from PATH, or says in one line that it needs Node 22",
    () =>
      Effect.gen(function* () {
        const { dir } = installed()
        const bin = path.join(
          dir,
          "node_modules",
          "@effect-mcp",
          "everything-server",
          "bin",
          "mcp-everything-server.js"
        )
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
        const major = Number(version.stdout.trim().replace(/^v/, "").split(".")[0])
        const result = yield* Effect.promise(() => run(nodeForBin, [bin, "--bogus"], { cwd: dir, env }))
        if (major < 22) {
          assert.strictEqual(result.code, 1, describeRun(`the bin on Node ${major}`, result))
          assert.strictEqual(
            result.stderr,
            `mcp-everything-server needs Node.js 22 or newer (this is ${version.stdout.trim()})\n`
          )
        } else {
          // A bad command line: the built server starts, reports the usage and exits with 2.
          assert.strictEqual(result.code, 2, describeRun(`the bin on Node ${major}`, result))
          assert.match(result.stderr, /usage: mcp-everything-server --stdio/)
        }
      }),
    120_000
  )
})
