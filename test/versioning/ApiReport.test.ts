/**
 * The API report and the changeset rule (`scripts/apiReport.ts`, its modules in `scripts/api/`, `npm run api:check`
 * in `npm test`) on a fake repository in a temp directory: two packages with hand-written `dist/*.d.ts`, as `tsc`
 * emits them.
 * An API change without a changeset naming its package fails, with one it passes, a doc comment is not an
 * API change, a stale report fails, and a release moves the baseline.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as Changesets from "../../scripts/api/changesets.ts"
import * as Command from "../../scripts/api/command.ts"
import * as Declarations from "../../scripts/api/declarations.ts"
import * as Report from "../../scripts/api/report.ts"
import * as Repository from "../../scripts/api/repository.ts"

const greeter = (signature: string, doc = "Greets someone.") => `/**
 * The greeter. A comment may hold code: \`a /* b\` or // c.
 */
import type * as Shape from "./internal/shape.js";
/** ${doc} */
export declare const greet: ${signature};
export interface Options {
    /** How loud (not a "string"). */
    readonly loud?: boolean | undefined;
    readonly shape?: Shape.Shape | undefined;
    readonly home: "https://example.com/*";
}
export {};
//# sourceMappingURL=Greeter.d.ts.map
`

const shape = (unrelated = "() => void") => `export interface Shape {
    readonly sides: number;
    readonly unit: Unit;
}
type Unit = "cm" | "in";
export declare const unrelated: ${unrelated};
`

const manifest = (name: string) =>
  JSON.stringify({
    name,
    version: "0.3.0",
    exports: {
      "./package.json": "./package.json",
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./internal/*": null,
      "./*": { types: "./dist/*.d.ts", default: "./dist/*.js" }
    }
  })

// A package: its manifest, a source file per module (the report skips a .d.ts whose source is gone) and its .d.ts.
const packageFiles = (dir: string, name: string, greeterDts: string): Record<string, string> => ({
  [`${dir}/package.json`]: manifest(name),
  [`${dir}/src/index.ts`]: "",
  [`${dir}/src/Greeter.ts`]: "",
  [`${dir}/src/internal/shape.ts`]: "",
  [`${dir}/dist/index.d.ts`]: 'export * as Greeter from "./Greeter.ts";\n',
  [`${dir}/dist/Greeter.d.ts`]: greeterDts,
  [`${dir}/dist/internal/shape.d.ts`]: shape(),
  [`${dir}/dist/Removed.d.ts`]: "export declare const removed: number;\n"
})

const dirs = ["packages/demo", "packages/other"]
const temporary: Array<string> = []

afterEach(async () => {
  await Promise.all(temporary.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })))
})

const write = async (repo: string, files: Record<string, string>) => {
  for (const [file, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(repo, file)), { recursive: true })
    await fs.writeFile(path.join(repo, file), text)
  }
}

/** `scripts/apiReport.ts [mode]` on the fake repository, no `tsc`: its exit code and what it printed. */
const run = async (repo: string, mode?: string) => {
  const lines: Array<string> = []
  const code = await Command.main(mode, {
    repo,
    dirs,
    emit: false,
    log: (l) => lines.push(l),
    error: (l) => lines.push(l)
  })
  return { code, output: lines.join("\n") }
}

/** A fake repository released as it is: reports written and committed, the baseline at this state. */
const released = async (): Promise<string> => {
  const repo = await fs.mkdtemp(path.join(os.tmpdir(), "api-report-"))
  temporary.push(repo)
  await write(repo, {
    ...packageFiles("packages/demo", "@fake/demo", greeter("(name: string) => string")),
    ...packageFiles("packages/other", "@fake/other", greeter("(name: string) => string")),
    ".changeset/README.md": "# Changesets\n"
  })
  assert.strictEqual((await run(repo, "--release")).code, 0)
  return repo
}

const report = (repo: string, dir: string) => fs.readFile(path.join(repo, dir, "api.md"), "utf8")

describe("the API report", () => {
  it("lists every entry's declarations without comments, and the internal declarations they use", async () => {
    const repo = await released()
    const text = await report(repo, "packages/demo")
    const sections = [...text.matchAll(/^## (.*)$/gm)].map((m) => m[1])
    assert.deepStrictEqual(sections, [
      "@fake/demo, @fake/demo/index",
      "@fake/demo/Greeter",
      "internal: dist/internal/shape.d.ts"
    ])
    assert.include(text, 'export * as Greeter from "./Greeter.js";')
    assert.include(text, "export declare const greet: (name: string) => string;")
    assert.include(text, 'readonly home: "https://example.com/*";')
    assert.include(text, 'type Unit = "cm" | "in";')
    for (const absent of [
      "Greets",
      "The greeter",
      "How loud",
      "sourceMappingURL",
      "export {};",
      "removed",
      "unrelated"
    ]) {
      assert.notInclude(text, absent)
    }
    assert.deepStrictEqual((await run(repo, "--check")).code, 0)
  })

  it("does not change with a doc comment, a moved declaration or an unused internal one", async () => {
    const repo = await released()
    const before = await report(repo, "packages/demo")
    const moved = greeter("(name: string) => string", "Says \"hello\": `greet(name)` // and 'once'.").replace(
      /(export declare const greet[^\n]*\n)([\s\S]*?\n}\n)/,
      "$2$1"
    )
    assert.notStrictEqual(moved, greeter("(name: string) => string"))
    await write(repo, {
      "packages/demo/dist/Greeter.d.ts": moved,
      "packages/demo/dist/internal/shape.d.ts": shape("(n: number) => string")
    })
    assert.strictEqual(Report.renderReport(await Repository.readPackageApi(repo, "packages/demo")), before)
    assert.strictEqual((await run(repo, "--check")).code, 0)
  })
})

describe("npm run api:check", () => {
  it("fails on a changed signature without a changeset, naming the package and the entry", async () => {
    const repo = await released()
    await write(repo, {
      "packages/demo/dist/Greeter.d.ts": greeter("(name: string, options?: Options) => string")
    })
    assert.strictEqual((await run(repo)).code, 0) // npm run api: the report is up to date
    const { code, output } = await run(repo, "--check")
    assert.strictEqual(code, 1)
    assert.include(output, "1 package(s) fail the API check: @fake/demo")
    assert.include(output, "@fake/demo: its API changed (since 0.3.0: @fake/demo/Greeter)")
    assert.notInclude(output, "@fake/other")
  })

  it("counts a change of an internal declaration a public one uses", async () => {
    const repo = await released()
    await write(repo, {
      "packages/demo/dist/internal/shape.d.ts": shape().replace('"cm" | "in"', '"cm" | "in" | "px"')
    })
    await run(repo)
    const { code, output } = await run(repo, "--check")
    assert.strictEqual(code, 1)
    assert.include(output, "internal: dist/internal/shape.d.ts")
  })

  it("passes with a pending changeset that bumps the package, and only then", async () => {
    const repo = await released()
    await write(repo, { "packages/demo/dist/Greeter.d.ts": greeter("(name: string, loud: boolean) => string") })
    await run(repo)
    const changeset = (front: string) => `---\n${front}\n---\n\nBreaking: \`greet\` takes \`loud\`.\n`

    await write(repo, { ".changeset/loud-greeting.md": changeset('"@fake/other": minor') })
    assert.strictEqual((await run(repo, "--check")).code, 1)
    await write(repo, { ".changeset/loud-greeting.md": changeset('"@fake/demo": none') })
    assert.strictEqual((await run(repo, "--check")).code, 1)
    await write(repo, { ".changeset/loud-greeting.md": changeset("'@fake/demo': patch\n\"@fake/missing\": minor") })
    const unknown = await run(repo, "--check")
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.output, "loud-greeting.md names @fake/missing, which is not published")

    await write(repo, { ".changeset/loud-greeting.md": changeset('"@fake/demo": minor') })
    const { code, output } = await run(repo, "--check")
    assert.strictEqual(code, 0, output)
  })

  it("fails on a stale report, naming it", async () => {
    const repo = await released()
    await write(repo, {
      "packages/demo/dist/Greeter.d.ts": greeter("(name: string) => number"),
      ".changeset/numbers.md": '---\n"@fake/demo": minor\n---\n\nBreaking: `greet` counts.\n'
    })
    const { code, output } = await run(repo, "--check")
    assert.strictEqual(code, 1)
    assert.include(output, "@fake/demo: packages/demo/api.md is stale: run `npm run api` and commit it")
    assert.strictEqual((await run(repo)).code, 0)
    assert.strictEqual((await run(repo, "--check")).code, 0)
  })

  it("takes the API at the last release as the baseline: a release with changesets pending is refused", async () => {
    const repo = await released()
    await write(repo, {
      "packages/demo/dist/Greeter.d.ts": greeter("(name: string) => Promise<string>"),
      ".changeset/async.md": '---\n"@fake/demo": minor\n---\n\nBreaking: `greet` is async.\n'
    })
    await run(repo)
    const refused = await run(repo, "--release")
    assert.strictEqual(refused.code, 1)
    assert.include(refused.output, "1 changeset(s) pending")
    // `changeset version` consumes the changesets (and bumps the version); then the release baseline moves.
    await fs.rm(path.join(repo, ".changeset/async.md"))
    assert.strictEqual((await run(repo, "--check")).code, 1)
    assert.strictEqual((await run(repo, "--release")).code, 0)
    assert.strictEqual((await run(repo, "--check")).code, 0)
  })
})

describe("declarations", () => {
  it("strips comments but not comment-like text in strings, and splits top-level statements", () => {
    const hole = "$" + "{string}" // a template literal type's placeholder
    const dts = [
      'import type * as A from "./a.ts"; // the module',
      '/* block */ export declare const url: "http://x/*y*/";',
      "export interface I {",
      `    readonly f: (s: \`a//${hole}\`) => {`,
      "        readonly x: 1;",
      "    };",
      "}",
      "export declare const b: 'it\\'s // not a comment';"
    ].join("\n")
    assert.deepStrictEqual(Declarations.splitStatements(Declarations.stripComments(dts)), [
      'import type * as A from "./a.ts";',
      'export declare const url: "http://x/*y*/";',
      `export interface I {\n    readonly f: (s: \`a//${hole}\`) => {\n        readonly x: 1;\n    };\n}`,
      "export declare const b: 'it\\'s // not a comment';"
    ])
    // Sorted: imports, then declarations by name; overloads keep their order.
    const unsorted = [
      "export declare const z: 1;",
      "export declare function f(a: 1): 1;",
      "export declare function f(a: 2): 2;",
      'import * as A from "./a.ts";'
    ]
    assert.deepStrictEqual(Declarations.normalizeDeclarations(unsorted.join("\n")).split("\n"), [
      'import * as A from "./a.js";',
      "export declare function f(a: 1): 1;",
      "export declare function f(a: 2): 2;",
      "export declare const z: 1;"
    ])
  })

  it("prints a declaration the same with or without comments where tsc keeps them", () => {
    const plain = [
      "export type Change = {",
      '    readonly _tag: "A";',
      "} | {",
      '    readonly _tag: "B";',
      "};",
      "export declare const f: (a: string, b?: number) => void;"
    ].join("\n")
    // tsc moves a union member after a comment to a line of its own, and keeps comments on parameters inline.
    const commented = [
      "export type Change = {",
      '    readonly _tag: "A";',
      "}",
      "/** The second kind. */",
      " | {",
      '    readonly _tag: "B";',
      "};",
      "export declare const f: (/** a */ a: string, /** b */ b?: number) => void;"
    ].join("\n")
    assert.strictEqual(Declarations.normalizeDeclarations(commented), Declarations.normalizeDeclarations(plain))
    assert.deepStrictEqual(Declarations.splitStatements(plain).length, 2)
  })

  it("reads a changeset's front matter as changesets does", () => {
    const parsed = Changesets.parseChangeset("x.md", "---\n\"@a/b\": minor\n'@a/c': patch\n@a/d: major\n---\n\nText.\n")
    assert.deepStrictEqual(parsed.releases, [
      { name: "@a/b", type: "minor" },
      { name: "@a/c", type: "patch" },
      { name: "@a/d", type: "major" }
    ])
    assert.throws(() => Changesets.parseChangeset("y.md", "no front matter"))
  })
})
