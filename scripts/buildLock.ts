/**
 * The one lock of the repository's builds: a file beside the packages that a
 * build holds while it writes `dist/` folders (tsc outputs, declarations made
 * plain, the everything server's bundle). Used by `scripts/build.ts`,
 * `scripts/pack.ts` and `apps/everything-server/scripts/bundle.ts` when run alone.
 */
import * as fs from "node:fs/promises"
import { fileURLToPath } from "node:url"

// Beside the packages, not in a dist/: one build at a time in this work tree (the install test and the
// cold-start bench both pack under `npm test`, and two `tsc -b` writing the same outputs race).
const lockFile = fileURLToPath(new URL("../.build.lock", import.meta.url))
const staleLockMs = 5 * 60_000

const lockAge = (): Promise<number> =>
  fs.stat(lockFile).then(
    (stat) => Date.now() - stat.mtimeMs,
    () => 0
  )

/** Runs `f` while holding the build lock (waiting for another build to finish; a lock older than 5 minutes is stale). */
export const withBuildLock = async <A>(f: () => Promise<A>): Promise<A> => {
  const deadline = Date.now() + 2 * staleLockMs
  for (;;) {
    const handle = await fs.open(lockFile, "wx").catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error
      return undefined
    })
    if (handle !== undefined) {
      await handle.close()
      break
    }
    if ((await lockAge()) > staleLockMs) await fs.rm(lockFile, { force: true })
    else if (Date.now() > deadline) throw new Error(`${lockFile} is held by another build for too long`)
    else await new Promise((resolve) => setTimeout(resolve, 100))
  }
  try {
    return await f()
  } finally {
    await fs.rm(lockFile, { force: true })
  }
}
