/**
 * The machinery of the install test (test/install/Install.test.ts): a private registry (test/support/Registry.ts)
 * with every package published to it by `scripts/publish.ts`, as a release does, and consumer projects in the OS
 * temp folder, outside the workspace, that install packages by name from there; the processes they run.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import { type Published, publishAll } from "../../scripts/publish.ts"
import * as Registry from "../support/Registry.ts"
import { root } from "../support/ServerProcess.ts"

const fixture = fileURLToPath(new URL("fixture/", import.meta.url))
const rootManifest = JSON.parse(await fs.readFile(path.join(root, "package.json"), "utf8")) as {
  readonly dependencies: Record<string, string>
  readonly devDependencies: Record<string, string>
}
/** The version the workspace pins `name` to. */
export const versionOf = (name: string) => rootManifest.dependencies[name] ?? rootManifest.devDependencies[name]

/** The Node running the tests (the project's Node 24); the temp projects' programs run on it. */
export const node = process.execPath

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `command args` to completion, never failing: the result says how it went. It runs as a process group of its
 * own, killed whole after `timeoutMs` (npx leaves what it started running when only npx is killed).
 */
export const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly timeoutMs?: number }
): Promise<Run> =>
  new Promise((resolve) => {
    const timeoutMs = options.timeoutMs ?? 120_000
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    // Only a hung command: the run ends on the child's own exit, this bound fires when something is broken.
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // It has just ended.
      }
    }, timeoutMs)
    const finish = (code: number | null) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    }
    // A command that cannot start reports only this; resolving twice is harmless.
    child.on("error", (error) => {
      stderr += `\n(${error.message})`
      finish(null)
    })
    child.on("close", finish)
  })

export const describeRun = (what: string, result: Run) =>
  `${what} exited with ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`

/** This environment without npm's per-script variables and without NODE_OPTIONS (the workspace's condition). */
export const cleanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (name === "NODE_OPTIONS" || name.startsWith("npm_") || name === "INIT_CWD") continue
    env[name] = value
  }
  return env
}

/** The package arguments of the `npm install` line of the README's Install section that names `name`. */
export const readmeInstall = async (name: string): Promise<ReadonlyArray<string>> => {
  const readme = await fs.readFile(path.join(root, "README.md"), "utf8")
  const section = readme.split(/^## /m).find((part) => part.startsWith("Install\n")) ?? ""
  const commands = section.split("\n").map((line) => line.replace(/#.*$/, "").trim().split(/\s+/))
  const line = commands.find((words) => words[0] === "npm" && words[1] === "install" && words.includes(name))
  if (line === undefined) throw new Error(`the README's Install section has no npm install line with ${name}`)
  return line.slice(2)
}

export interface Project {
  readonly dir: string
  /** For the project's programs: npm on the registry, no type stripping; this Node, then the installed bins, on PATH. */
  readonly env: NodeJS.ProcessEnv
}

/** A project `manifest.name` in `tempDir`: that manifest and `files` of the fixture, then `npm install packages`. */
export const makeProject = async (
  tempDir: string,
  registry: Registry.Registry,
  manifest: { readonly name: string; readonly [field: string]: unknown },
  packages: ReadonlyArray<string>,
  files: ReadonlyArray<string>
): Promise<Project> => {
  const dir = path.join(tempDir, manifest.name)
  await fs.mkdir(dir)
  await fs.writeFile(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
  for (const file of files) await fs.copyFile(path.join(fixture, file), path.join(dir, file))
  if (packages.length > 0) {
    const install = await run("npm", ["install", ...packages], { cwd: dir, env: registry.npmEnv, timeoutMs: 300_000 })
    assert.strictEqual(install.code, 0, describeRun(`npm install ${packages.join(" ")}`, install))
  }
  const bins = [path.dirname(node), path.join(dir, "node_modules", ".bin"), process.env.PATH ?? ""]
  return {
    dir,
    env: { ...registry.npmEnv, NODE_OPTIONS: "--no-experimental-strip-types", PATH: bins.join(path.delimiter) }
  }
}

/** Each installed README's TypeScript example, as a file beside the consumer: it joins the type check. */
export const writeReadmeExamples = async (full: Project, published: ReadonlyArray<Published>): Promise<Project> => {
  for (const { name } of published) {
    const readme = await fs.readFile(path.join(full.dir, "node_modules", name, "README.md"), "utf8").catch(() => "")
    for (const [index, [, code]] of [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].entries()) {
      await fs.writeFile(path.join(full.dir, `readme-${name.split("/")[1]}-${index}.ts`), code!)
    }
  }
  return full
}

/**
 * Starts the registry in `tempDir` (owned by `scope`), then builds and publishes every package to it as a
 * release does.
 */
export const publishToRegistry = async (
  tempDir: string,
  scope: Scope.Closeable
): Promise<{ readonly registry: Registry.Registry; readonly published: ReadonlyArray<Published> }> => {
  // npm starts on the `node` of PATH, and so do the bins npx runs: this Node comes first.
  const env = { ...cleanEnv(), PATH: [path.dirname(node), process.env.PATH ?? ""].join(path.delimiter) }
  const registry = await Effect.runPromise(Scope.provide(Registry.start(path.join(tempDir, "registry"), env), scope))
  const published = await publishAll({ registry: registry.url, env: registry.publisherEnv })
  return { registry, published }
}
