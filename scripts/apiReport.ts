/**
 * The public API report of each published package, and the changeset rule.
 *
 * - `npm run api` (`node scripts/apiReport.ts`) writes `<package>/api.md` for every package of
 *   `publishable` (`scripts/build.ts`): every entry its package.json `exports` opens, each with its
 *   declarations as `tsc` emits them into `dist/**\/*.d.ts`, then the declarations of internal modules
 *   that those use, and what these use in turn; every comment left out.
 * - `npm run api:check` (`--check`, run by `npm test`) fails, listing the packages, when (1) a committed
 *   report differs from the generated one ("stale: run npm run api"), or (2) a package's API differs
 *   from its API at its last release (`.changeset/api-baseline.json`) and no pending changeset
 *   (`.changeset/*.md`) gives that package a `major`, `minor` or `patch` bump. It also refuses a
 *   changeset naming a package that is not published.
 * - `npm run version` runs `changeset version` (which consumes the changesets: versions, CHANGELOG.md),
 *   then this script with `--release`: the reports again, and the new release baseline. `--baseline`
 *   rewrites the baseline by hand after a change of the report's format (not of the API).
 *
 * The modules under `scripts/api/`, one concept each:
 * - `declarations.ts`: from the text of a `.d.ts` to its normalised statements;
 * - `references.ts`: what declarations use from other modules;
 * - `packageApi.ts`: a package's API, from its `exports` and the internal modules their types reach;
 * - `report.ts`: the report of a package, as committed in `<package>/api.md`;
 * - `changesets.ts`: the release baseline and the changeset rule;
 * - `repository.ts`: the files all of these read and write;
 * - `command.ts`: the command line.
 *
 * Runs on Node 24 (type stripping): `node scripts/apiReport.ts [--check | --release | --baseline]`.
 */
import { main } from "./api/command.ts"

process.exitCode = await main(process.argv[2])
