/**
 * A release's publish step: builds and stages every publishable package exactly
 * as `scripts/pack.ts` packs it (same build, same staged manifests), then runs
 * `npm publish <stage> --registry <url> --access public` for each, one after the
 * other in dependency order, so a package is never on the registry before what
 * it depends on.
 *
 *     node scripts/publish.ts --registry <url> [--tag <dist-tag>]
 *
 * The registry is required (never npm's default by accident). npm reads the
 * credentials for it from its own config, as for any `npm publish`: log in first
 * (`npm login --registry <url>`) or put `//host/:_authToken=...` in an `.npmrc`.
 * A version already on the registry makes that package's publish fail, unless
 * the registry holds exactly the tarball staged here (same SHA-1): npm re-sends
 * a publish whose reply it lost (a reset, a 5xx from a loaded registry), and
 * the registry refuses the second copy of what the first one stored; a re-run
 * after a failure goes on the same way. The packages before a failure stay
 * published (the error names them). `publishAll` is the same from a program
 * (the registry test in `test/install/`).
 *
 * Runs on Node 24 (type stripping).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs, promisify } from "node:util"
import { withStaged } from "./pack.ts"

const run = promisify(execFile)

/** One published package. */
export interface Published {
  readonly name: string
  readonly version: string
}

export interface PublishOptions {
  /** The registry's URL, as npm's `--registry` takes it. */
  readonly registry: string
  /** The dist-tag (npm's default, `latest`, when absent). */
  readonly tag?: string
  /** npm's environment (its config: `npm_config_userconfig`, `npm_config_cache`, ...); this process's when absent. */
  readonly env?: NodeJS.ProcessEnv
}

/** Builds, stages and publishes every publishable package to `options.registry`, in dependency order. */
export const publishAll = (options: PublishOptions): Promise<ReadonlyArray<Published>> =>
  withStaged(os.tmpdir(), async (staged) => {
    const published: Array<Published> = []
    for (const { stage } of staged) {
      const { name, version } = JSON.parse(await fs.readFile(path.join(stage, "package.json"), "utf8")) as Published
      const args = ["publish", stage, "--registry", options.registry, "--access", "public"]
      if (options.tag !== undefined) args.push("--tag", options.tag)
      const npm = { cwd: path.dirname(stage), env: options.env ?? process.env, maxBuffer: 64 * 1024 * 1024 }
      await run("npm", args, npm).catch(async (error: { stderr?: string; message: string }) => {
        const stderr = error.stderr ?? ""
        if (stderr.includes("EPUBLISHCONFLICT") || stderr.includes("cannot publish over")) {
          if (await holdsStaged(stage, `${name}@${version}`, options.registry, npm)) return
        }
        const before = published.map((p) => `${p.name}@${p.version}`).join(", ") || "none"
        // npm's errors, without the list of the tarball's files it prints first.
        const reason = stderr
          .split("\n")
          .filter((line) => line.startsWith("npm error"))
          .join("\n")
        throw new Error(
          `npm publish ${name}@${version} failed (published before it: ${before}):\n${reason || stderr || error.message}`
        )
      })
      published.push({ name, version })
    }
    return published
  })

/** Whether the registry's `spec` is the tarball npm packs from `stage` (their SHA-1s agree). */
const holdsStaged = async (
  stage: string,
  spec: string,
  registry: string,
  npm: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly maxBuffer: number }
): Promise<boolean> => {
  try {
    const packed = JSON.parse((await run("npm", ["pack", stage, "--dry-run", "--json"], npm)).stdout) as Array<{
      readonly shasum: string
    }>
    const stored = (await run("npm", ["view", spec, "dist.shasum", "--registry", registry], npm)).stdout.trim()
    return packed[0]?.shasum !== undefined && packed[0].shasum === stored
  } catch {
    return false
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { registry: { type: "string" }, tag: { type: "string" } } })
  if (values.registry === undefined) {
    console.error("usage: node scripts/publish.ts --registry <url> [--tag <dist-tag>]")
    process.exit(2)
  }
  const published = await publishAll({
    registry: values.registry,
    ...(values.tag === undefined ? {} : { tag: values.tag })
  })
  for (const { name, version } of published) console.log(`${name}@${version}\t${values.registry}`)
}
