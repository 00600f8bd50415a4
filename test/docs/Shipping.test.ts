/**
 * docs/shipping.md shows the two files of the recipe in `examples/shipping/`
 * (which `test/install` runs): the code in the guide is the code of those files,
 * comments aside, so the guide cannot drift from what is tested.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { root } from "../support/ServerProcess.ts"

/** The code of a JavaScript text: no comment lines, no trailing `//` comments, no blank lines. */
const code = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.replace(/\s+\/\/ .*$/, "").trimEnd())
    .filter((line) => line !== "" && !line.trimStart().startsWith("//"))
    .join("\n")

describe("docs/shipping.md", () => {
  it("shows the recipe's rolldown config and launcher as they are in examples/shipping", () => {
    const guide = fs.readFileSync(path.join(root, "docs", "shipping.md"), "utf8")
    const blocks = [...guide.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((match) => code(match[1]!))
    const files = ["rolldown.config.mjs", path.join("bin", "server.mjs")].map((file) =>
      code(fs.readFileSync(path.join(root, "examples", "shipping", file), "utf8"))
    )
    assert.deepStrictEqual(blocks, files)
  })
})
