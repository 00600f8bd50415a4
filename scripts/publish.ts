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
 * A version already on the registry makes that package's publish fail; the
 * packages before it stay published (the error names them). `publishAll` is the
 * same from a program (the registry test in `test/install/`).
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
      await run("npm", args, {
        cwd: path.dirname(stage),
        env: options.env ?? process.env,
        maxBuffer: 64 * 1024 * 1024
      }).catch((error: { stderr?: string; message: string }) => {
        const before = published.map((p) => `${p.name}@${p.version}`).join(", ") || "none"
        // npm's errors, without the list of the tarball's files it prints first.
        const stderr = error.stderr ?? ""
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
