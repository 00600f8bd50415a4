/**
 * An optional peer dependency (`@effect/sql-pg` for `SqlDatabase`'s
 * `postgres://`) that cannot be imported is a typed failure of one line, not
 * a defect: when the package is not installed the line says the npm command;
 * when it is there but one of its own imports is missing (a broken install),
 * the line names that one. The imports fail for real (Node's resolver);
 * test/cli/MissingPackages.test.ts checks the whole path through the CLI.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as OptionalPeer from "../src/internal/optionalPeer.ts"

/** The failure of importing `name` with `load` (a defect fails the test). */
const failure = <A>(name: string, load: () => Promise<A>) =>
  Effect.flip(OptionalPeer.importOptional({ name, neededBy: "PostgreSQL", load, onError: (message) => message }))

describe("OptionalPeer.importOptional", () => {
  it.effect("a package that is not installed: a failure with the npm command", () =>
    Effect.gen(function* () {
      const name = "@effect-mcp/not-installed-peer"
      const message = yield* failure(name, () => import(/* @vite-ignore */ `${name}/PgClient`))
      assert.strictEqual(message, `PostgreSQL needs the optional package ${name}: npm install ${name}`)
    })
  )

  it.effect("a package that cannot load one of its own imports: the line names that import", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-peer-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const entry = path.join(dir, "PgClient.mjs")
      fs.writeFileSync(entry, 'export * from "effect-mcp-test-missing-dependency"\n')
      const message = yield* failure("@effect/sql-pg", () => import(/* @vite-ignore */ pathToFileURL(entry).href))
      assert.match(
        message,
        /^PostgreSQL needs the optional package @effect\/sql-pg, which could not be loaded: Cannot find package 'effect-mcp-test-missing-dependency'/
      )
    })
  )
})
