/**
 * The docs say what the repository holds: docs/design.md lists every package
 * and app there is (and, marked "(planned)", only what is not there yet), and
 * names the packages that import `node:*` and those compiled without Node's
 * types; getting-started's project setup is the one the install test uses for
 * its consumer project; every JSON block is JSON, and the `mcpServers`
 * configuration hosts.md shows is one McpConfig decodes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { root } from "../support/ServerProcess.ts"
import { blocksOf, docFiles } from "./markdown.ts"

const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8")

const dirs = (parent: string) =>
  fs
    .readdirSync(path.join(root, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, parent, entry.name, "package.json")))
    .map((entry) => `${parent}/${entry.name}`)
    .sort()

/** The files under `packages/<name>/src` importing a `node:*` module. */
const nodeImporters = (name: string): ReadonlyArray<string> => {
  const src = path.join(root, "packages", name, "src")
  return fs
    .readdirSync(src, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .filter((file) => /^(import|export) [^\n]*from "node:/m.test(fs.readFileSync(path.join(src, file), "utf8")))
}

describe("docs/design.md", () => {
  const design = read("docs/design.md")
  const map = blocksOf("docs/design.md").find((block) => block.code.startsWith("packages/protocol"))!.code
  const entries = [...map.matchAll(/^((?:packages|apps)\/[\w-]+)\s+(.*)$/gm)].map((m) => ({
    dir: m[1]!,
    planned: m[2]!.startsWith("(planned)")
  }))

  it("lists every package and app there is, and marks what is not there yet as planned", () => {
    const present = entries.filter((e) => !e.planned).map((e) => e.dir)
    assert.deepStrictEqual([...present].sort(), [...dirs("packages"), ...dirs("apps")].sort())
    for (const entry of entries.filter((e) => e.planned)) {
      assert.isFalse(fs.existsSync(path.join(root, entry.dir)), `${entry.dir} is there: it is not planned`)
    }
  })

  it("names the packages that import node:* and those compiled without Node's types", () => {
    const packages = dirs("packages").map((dir) => path.basename(dir))
    const paragraph = design.slice(design.indexOf("Direction of imports:"))
    const said = paragraph.slice(0, paragraph.indexOf("\n\n")).replaceAll("\n", " ")
    for (const name of packages) {
      const importers = nodeImporters(name)
      if (importers.length === 0) continue
      assert.include(said, `\`${name}\``, `${name} imports node:* (${importers.join(", ")})`)
      // Outside platform-node (Node wiring through and through), each public module that does is named.
      if (name === "platform-node") continue
      for (const file of importers.filter((f) => !f.startsWith("internal"))) {
        assert.include(said, `\`${path.basename(file, ".ts")}\``, `packages/${name}/src/${file} imports node:*`)
      }
    }
    const withoutNode = packages.filter((name) => {
      const tsconfig = JSON.parse(read(`packages/${name}/tsconfig.json`)) as {
        readonly compilerOptions: { readonly types?: ReadonlyArray<string> }
      }
      // The base config's `"types": []` holds unless the package names Node's.
      return !(tsconfig.compilerOptions.types ?? []).includes("node")
    })
    const listed = /`protocol`[^.]*are compiled without Node's types/.exec(said)?.[0] ?? ""
    assert.deepStrictEqual(
      [...listed.matchAll(/`([\w-]+)`/g)].map((m) => m[1]).sort(),
      [...withoutNode].sort(),
      "the packages compiled without Node's types"
    )
    for (const name of withoutNode) assert.deepStrictEqual(nodeImporters(name), [], name)
  })
})

describe("docs/getting-started.md", () => {
  it("shows the project setup the install test's consumer project has", () => {
    const blocks = blocksOf("docs/getting-started.md").filter((block) => block.lang === "json")
    const manifest = JSON.parse(blocks[0]!.code) as { readonly type?: string }
    assert.strictEqual(manifest.type, "module")
    assert.deepStrictEqual(JSON.parse(blocks[1]!.code), JSON.parse(read("test/install/fixture/tsconfig.json")))
    // The install test writes the consumer's package.json with "type": "module" and installs these.
    const install = read("test/install/Install.test.ts")
    assert.include(install, 'type: "module"')
    assert.include(install, '["effect", "@effect/platform-node", "@types/node"]')
  })
})

describe("json blocks", () => {
  it.effect("parse, and hosts.md's configuration decodes", () =>
    Effect.gen(function* () {
      for (const file of docFiles()) {
        for (const block of blocksOf(file).filter((b) => b.lang === "json")) {
          assert.doesNotThrow(() => JSON.parse(block.code), undefined, `${file}:${block.line}`)
        }
      }
      const config = blocksOf("docs/hosts.md").find((b) => b.lang === "json")!
      const decoded = yield* McpConfig.decode(JSON.parse(config.code))
      assert.deepStrictEqual(Object.keys(decoded.mcpServers), ["files", "search", "old"])
    })
  )
})

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replaceAll(" ", "-")

describe("links between the docs", () => {
  it("point at files that exist, and at headings they have", () => {
    const broken: Array<string> = []
    for (const file of docFiles()) {
      const text = read(file).replace(/^```[\s\S]*?^```$/gm, "")
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue
        const [relative, anchor] = target!.split("#") as [string, string | undefined]
        const resolved = relative === "" ? file : path.join(path.dirname(file), relative)
        if (!fs.existsSync(path.join(root, resolved))) {
          broken.push(`${file}: ${target} (no such file)`)
          continue
        }
        if (anchor === undefined || !resolved.endsWith(".md")) continue
        const headings = [...read(resolved).matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!))
        if (!headings.includes(anchor)) broken.push(`${file}: ${target} (no such heading)`)
      }
    }
    assert.deepStrictEqual(broken, [])
  })
})
