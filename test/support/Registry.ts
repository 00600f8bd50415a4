/**
 * A private npm registry for a test: Verdaccio (the root dev dependency) on
 * 127.0.0.1, on a port the OS hands out, its storage in a folder of the test's,
 * stopped when the test's scope closes.
 *
 * It serves `@effect-mcp/*` and nothing else, only what is published to it: no
 * uplink, so a package of the same name on the public registry can never be
 * installed instead. npm reaches it for that scope alone (`@effect-mcp:registry`,
 * as for any private scope) and gets every other package from its own registry
 * (https://registry.npmjs.org), with the user's npm cache: proxying those through
 * Verdaccio, whose storage starts empty every run, doubled the install time.
 *
 * `npmEnv` is npm's environment for a user of the registry (a user config with
 * that scope and no credentials, a cache folder of the test's); `publisherEnv`
 * adds the token of a user created through the registry's API, as `npm adduser`
 * does. `npm install`, `npx` and `npm publish` then run as a user's would.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as path from "node:path"
import { promisify } from "node:util"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { node, ProcessError, spawnChild } from "./ServerProcess.ts"

/** A running registry. */
export interface Registry {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string
  /** npm's environment for a user of the registry: its user config maps `@effect-mcp` to it, with no credentials. */
  readonly npmEnv: NodeJS.ProcessEnv
  /** {@link npmEnv} with a publisher's token for the registry: what `npm publish` needs. */
  readonly publisherEnv: NodeJS.ProcessEnv
}

const verdaccio = createRequire(import.meta.url).resolve("verdaccio")

// Verdaccio's own CLI cannot listen on port 0 (it takes 0 for "no port"); its `runServer` returns the HTTP server
// unstarted, so the launcher starts it on port 0 and reports the port it got. It also exits when its stdin ends:
// the test's process is gone, however it ended.
const launcher = `
const [verdaccio, config] = process.argv.slice(1)
require(verdaccio).runServer(config).then(
  (server) => server.listen(0, "127.0.0.1", () => console.error("registry listening on http://127.0.0.1:" + server.address().port + "/")),
  (error) => { console.error(error); process.exit(1) }
)
process.stdin.on("end", () => process.exit(0)).resume()
`

/** The configuration (JSON is YAML): storage and users in `dir`; `@effect-mcp/*` only, with no uplink. */
const configuration = (dir: string) => ({
  storage: path.join(dir, "storage"),
  auth: { htpasswd: { file: path.join(dir, "htpasswd") } },
  // JWT tokens: a legacy token carries the user's password, checked (bcrypt) again on every request it comes with.
  security: { api: { jwt: { sign: { expiresIn: "1h" } } } },
  packages: { "@effect-mcp/*": { access: "$all", publish: "$authenticated" } },
  web: { enable: false },
  log: { type: "stdout", format: "json", level: "warn" }
})

const run = promisify(execFile)

// `yes`: npx installs what it runs without asking (off a terminal it would only warn). `prefer-offline`: a package
// document npm has cached is used as it is (this registry's never are from an earlier run: their URL has the port).
const npmSettings = ["update-notifier=false", "audit=false", "fund=false", "yes=true", "prefer-offline=true"]

/** Creates a user through the registry's API (what `npm adduser` does) and returns its token. */
const addUser = (url: string, name: string) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name, password: `${name}-password` })
      })
      const body = (await response.json()) as { readonly token?: string }
      if (!response.ok || body.token === undefined) throw new Error(`${response.status} ${JSON.stringify(body)}`)
      return body.token
    },
    catch: (error) => new ProcessError(`cannot create the registry's user ${name}: ${error}`)
  })

/** The npm cache of this machine's user (npm's `cache` setting), asked of npm itself. */
const userCache = Effect.tryPromise({
  try: () => run("npm", ["config", "get", "cache"]).then(({ stdout }) => stdout.trim()),
  catch: (error) => new ProcessError(`npm config get cache failed: ${error}`)
})

/**
 * Starts a registry keeping everything in `dir` (created if missing), owned by the current scope. `env` is the
 * environment of the registry's process and the base of {@link Registry.npmEnv}: it should put the Node that npm and
 * the installed bins are to run on first on PATH.
 */
export const start = (dir: string, env: NodeJS.ProcessEnv): Effect.Effect<Registry, ProcessError, Scope.Scope> =>
  Effect.gen(function* () {
    const config = path.join(dir, "config.yaml")
    yield* Effect.promise(async () => {
      await fs.mkdir(dir, { recursive: true })
      await fs.writeFile(config, JSON.stringify(configuration(dir), null, 2))
    })
    const child = yield* spawnChild(node, ["-e", launcher, verdaccio, config], { stdin: "pipe", env })
    const url = (yield* child.waitForStderr(/registry listening on (http:\/\/127\.0\.0\.1:\d+\/)/))[1]!
    const token = yield* addUser(url, "publisher")
    const cache = yield* userCache
    const writeConfig = (name: string, lines: ReadonlyArray<string>) =>
      Effect.promise(async () => {
        const file = path.join(dir, name)
        await fs.writeFile(file, `${[`@effect-mcp:registry=${url}`, ...lines, ...npmSettings].join("\n")}\n`)
        return file
      })
    const consumer = yield* writeConfig("npmrc", [])
    const publisher = yield* writeConfig("npmrc-publisher", [`//${new URL(url).host}/:_authToken=${token}`])
    // A cache folder of the test's, so what npx installs (in `_npx` beside the cache) is this run's and goes with
    // it; its `_cacache` is the user's, so what npm downloaded before (tarballs checked by integrity) is reused.
    const npmCache = path.join(dir, "npm-cache")
    yield* Effect.promise(async () => {
      await fs.mkdir(path.join(cache, "_cacache"), { recursive: true })
      await fs.mkdir(npmCache, { recursive: true })
      await fs.symlink(path.join(cache, "_cacache"), path.join(npmCache, "_cacache"))
    })
    const npmEnv = { ...env, npm_config_userconfig: consumer, npm_config_cache: npmCache }
    return { url, npmEnv, publisherEnv: { ...npmEnv, npm_config_userconfig: publisher } } satisfies Registry
  })
