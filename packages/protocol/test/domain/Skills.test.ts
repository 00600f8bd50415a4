/**
 * The Skills extension's data: SKILL.md frontmatter read as YAML (the subset
 * skills use, everything else refused), frontmatter comparison, digests, URI
 * helpers, and the methods every revision's table carries behind the
 * extension's declaration.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as Skills from "@effect-mcp/protocol/Skills"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

const parse = (text: string) => Skills.parseSkillMarkdown(text)

describe("Skills", () => {
  it("reads frontmatter with core-schema typing, nested maps, lists and block scalars", () => {
    const text = [
      "\ufeff---",
      "name: pdf-processing",
      'description: "Extract: fill, and assemble"',
      "license: 'Apache-2.0'",
      "version: 2",
      "ratio: 0.5",
      "beta: true",
      "empty: ~",
      "allowed-tools: [Read, Write]",
      "metadata:",
      "  author: ada # a comment",
      "  tags:",
      "    - pdf",
      "    - forms",
      "notes: |",
      "  line one",
      "  line two",
      "---",
      "",
      "Body.",
      ""
    ].join("\n")
    const parsed = parse(text)
    assert.isTrue(Result.isSuccess(parsed))
    const { frontmatter, body } = Result.getOrThrow(parsed)
    assert.deepStrictEqual(frontmatter, {
      name: "pdf-processing",
      description: "Extract: fill, and assemble",
      license: "Apache-2.0",
      version: 2,
      ratio: 0.5,
      beta: true,
      empty: null,
      "allowed-tools": ["Read", "Write"],
      metadata: { author: "ada", tags: ["pdf", "forms"] },
      notes: "line one\nline two\n"
    })
    assert.strictEqual(body, "\nBody.\n")
  })

  it("refuses a SKILL.md without frontmatter, without name/description, or with YAML outside the subset", () => {
    assert.isTrue(Result.isFailure(parse("# no frontmatter\n")))
    assert.isTrue(Result.isFailure(parse("---\nname: a\n---\n")))
    assert.isTrue(Result.isFailure(parse("---\nname: a\ndescription: \n---\n")))
    assert.isTrue(Result.isFailure(parse("---\nname: &anchor a\ndescription: d\n---\n")))
    assert.isTrue(Result.isFailure(parse("---\nname: a\nname: b\ndescription: d\n---\n")))
    assert.isTrue(Result.isFailure(parse("---\nname: a\ndescription: d\n")))
  })

  it("compares frontmatter by content", () => {
    assert.deepStrictEqual(Skills.frontmatterDifferences({ a: 1, b: { c: [1] } }, { b: { c: [1] }, a: 1 }), [])
    assert.deepStrictEqual(
      Skills.frontmatterDifferences({ name: "x", description: "y" }, { name: "x", description: "z" }),
      ['description: file="y" entry="z"']
    )
  })

  it.effect("digests are sha256 of the raw bytes", () =>
    Effect.gen(function* () {
      const digest = yield* Skills.digest(new TextEncoder().encode("abc"))
      assert.strictEqual(digest, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      assert.match(digest, Skills.digestPattern)
    })
  )

  it("names and folders of SKILL.md URIs", () => {
    assert.strictEqual(Skills.directoryOf("skill://acme/pdf/SKILL.md"), "skill://acme/pdf")
    assert.strictEqual(Skills.nameOf("skill://acme/pdf/SKILL.md"), "pdf")
    assert.strictEqual(Skills.nameOf("skill://acme/pdf/README.md"), undefined)
    assert.isTrue(Skills.namePattern.test("pdf-processing"))
    assert.isFalse(Skills.namePattern.test("pdf--processing"))
    assert.isFalse(Skills.namePattern.test("-pdf"))
  })

  it("every revision carries skills/list, skills/get and resources/directory/read behind the declaration", () => {
    for (const version of ProtocolVersion.all) {
      const methods = Registry.get(version).methods
      assert.deepStrictEqual(methods.get(Skills.listMethod)?.capability, {
        side: "server",
        path: ["extensions", Skills.extensionId]
      })
      assert.isDefined(methods.get(Skills.getMethod))
      assert.deepStrictEqual(methods.get(Skills.directoryReadMethod)?.capability?.path, [
        "extensions",
        Skills.extensionId,
        "directoryRead"
      ])
    }
  })

  it("entries decode with a manifest or as dynamic, and refuse a malformed digest", () => {
    const decode = Schema.decodeUnknownResult(Skills.Skill)
    const frontmatter = { name: "a", description: "d", extra: { x: 1 } }
    assert.isTrue(Result.isSuccess(decode({ uri: "skill://a/SKILL.md", frontmatter, resources: "dynamic" })))
    const entry = { uri: "skill://a/SKILL.md", digest: `sha256:${"0".repeat(64)}`, size: 3 }
    const ok = decode({ uri: "skill://a/SKILL.md", frontmatter, resources: [entry] })
    assert.deepStrictEqual(Result.getOrThrow(ok).frontmatter, frontmatter)
    assert.isTrue(
      Result.isFailure(decode({ uri: "skill://a/SKILL.md", frontmatter, resources: [{ ...entry, digest: "md5:00" }] }))
    )
  })
})
