/**
 * The Skills extension (SEP-2640) end to end over the in-memory harness, on
 * every revision: the server declares the extension (and resources), lists
 * and gets entries whose digests and sizes match the files it serves, reads
 * folders, answers -32602 for what it does not serve; the client lists,
 * gets, reads and verifies, and refuses files that fail verification.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ClientSkills from "@effect-mcp/client/Skills"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Skills from "@effect-mcp/protocol/Skills"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Skill from "@effect-mcp/server/Skill"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { type Obj, revisions } from "./fixtures.ts"

const skillMd =
  "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nUse FORMS.md.\n"
const forms = "# Forms\n"
const pdf = {
  files: { "SKILL.md": skillMd, "references/FORMS.md": forms, "scripts/fill.py": new Uint8Array([1, 2, 3]) },
  prefix: "acme"
}

const server = (skills: Layer.Layer<never, Skill.SkillError, McpServer.McpServer>) =>
  Layer.provideMerge(Layer.orDie(skills), McpServer.layer({ name: "skills", version: "1.0.0", pageSize: 1 }))

const root = "skill://acme/pdf-processing"

describe("Skills", () => {
  for (const version of revisions) {
    it.effect(`${version}: declared, listed, got, read and verified`, () =>
      Effect.gen(function* () {
        const { client } = yield* McpTest.connect(
          server(Skill.layer(pdf, { files: { "SKILL.md": skillMd.replace("pdf-processing", "other") } })),
          {
            revision: version
          }
        )
        assert.deepStrictEqual(Skills.capabilityOf(client.serverCapabilities), { directoryRead: true })
        assert.isDefined(client.serverCapabilities.resources)
        assert.isTrue(ClientSkills.supported(client) && ClientSkills.directoryRead(client))
        // pageSize 1: two pages, one entry each.
        const skills = yield* ClientSkills.list(client)
        assert.deepStrictEqual(
          skills.map((s) => s.uri),
          [`${root}/SKILL.md`, "skill://other/SKILL.md"]
        )
        const entry = skills[0]!
        assert.deepStrictEqual(entry.frontmatter, {
          name: "pdf-processing",
          description: "Extract, fill, and assemble PDF documents"
        })
        const manifest = entry.resources as ReadonlyArray<Skills.SkillResourceEntry>
        assert.deepStrictEqual(
          manifest.map((r) => [r.uri, r.size]),
          [
            [`${root}/SKILL.md`, new TextEncoder().encode(skillMd).byteLength],
            [`${root}/references/FORMS.md`, forms.length],
            [`${root}/scripts/fill.py`, 3]
          ]
        )
        assert.deepStrictEqual(yield* ClientSkills.get(client, entry.uri), entry)

        const file = yield* ClientSkills.read(client, entry)
        assert.strictEqual(file.mimeType, "text/markdown")
        assert.strictEqual(file.body, "\nUse FORMS.md.\n")
        assert.isTrue(file.verified)
        const formsFile = yield* ClientSkills.read(client, entry, "references/FORMS.md")
        assert.strictEqual(formsFile.text, forms)
        const script = yield* ClientSkills.read(client, entry, "scripts/fill.py")
        assert.deepStrictEqual([...script.bytes], [1, 2, 3])
        const unlisted = yield* Effect.flip(ClientSkills.read(client, entry, "secrets.txt"))
        assert.strictEqual(unlisted._tag === "SkillVerificationError" && unlisted.reason, "unlisted")

        // The SKILL.md is listed as a resource named and described by its frontmatter.
        const listed = (yield* client.listResources()).resources.find((r) => r.uri === entry.uri)
        assert.strictEqual(listed?.name, "pdf-processing")
        assert.strictEqual(listed?.description, "Extract, fill, and assemble PDF documents")

        const children = yield* ClientSkills.readDirectory(client, root)
        assert.deepStrictEqual(
          children.map((c) => [c.uri, c.mimeType]),
          [
            [`${root}/SKILL.md`, "text/markdown"],
            [`${root}/references`, Skills.directoryMimeType],
            [`${root}/scripts`, Skills.directoryMimeType]
          ]
        )
        const notDirectory = yield* Effect.flip(ClientSkills.readDirectory(client, `${root}/SKILL.md`))
        assert.instanceOf(notDirectory, McpError.InvalidParams)
        const unknown = yield* Effect.flip(ClientSkills.get(client, "skill://nope/SKILL.md"))
        assert.instanceOf(unknown, McpError.InvalidParams)
      })
    )
  }

  it.effect("resources/list lists each skill's SKILL.md only; its other files are read by URI", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(
        server(
          Layer.merge(
            Skill.layer(pdf),
            Resource.layer(Resource.make({ uri: "test://plain", name: "plain", read: Effect.succeed("p") }))
          )
        ),
        { revision: "2025-11-25" }
      )
      const uris: Array<string> = []
      let cursor: string | undefined
      do {
        const page = (yield* request("resources/list", cursor === undefined ? {} : { cursor })) as Obj
        for (const r of page.resources) uris.push(r.uri)
        cursor = page.nextCursor
      } while (cursor !== undefined)
      assert.deepStrictEqual(uris, [`${root}/SKILL.md`, "test://plain"])
      const forms = (yield* request("resources/read", { uri: `${root}/references/FORMS.md` })) as Obj
      assert.strictEqual(forms.contents[0].text, "# Forms\n")
      const script = (yield* request("resources/read", { uri: `${root}/scripts/fill.py` })) as Obj
      assert.strictEqual(script.contents[0].blob, "AQID")
    })
  )

  it.effect("skills added and removed at run time: entry and files together, one list_changed each way", () =>
    Effect.gen(function* () {
      // Declared from the start: a stateful session keeps the capabilities it was initialized with.
      const {
        request,
        server: mcp,
        drain
      } = yield* McpTest.connectRaw(McpServer.layer({ name: "skills", version: "1.0.0", declare: ["skills"] }), {
        revision: "2025-11-25"
      })
      const made = yield* Skill.make(pdf)
      const listChanges = Effect.map(
        drain,
        (got) => got.filter((n) => n.method === "notifications/resources/list_changed").length
      )
      const skills = Effect.map(request("skills/list"), (r) => (r as Obj).skills.map((s: Obj) => s.uri))
      const read = (uri: string) => Effect.exit(request("resources/read", { uri }))
      // Through the server service, as tools are registered at run time.
      const scope = yield* Scope.make()
      yield* mcp.register("skill", [made], Context.empty()).pipe(Scope.provide(scope))
      assert.strictEqual(yield* listChanges, 1)
      assert.deepStrictEqual(yield* skills, [`${root}/SKILL.md`])
      assert.isTrue(Exit.isSuccess(yield* read(`${root}/references/FORMS.md`)))
      assert.isTrue(Exit.isSuccess(yield* read(`${root}/SKILL.md`)))
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(yield* listChanges, 1)
      assert.deepStrictEqual(yield* skills, [])
      assert.isTrue(Exit.isFailure(yield* read(`${root}/references/FORMS.md`)))
      assert.isTrue(Exit.isFailure(yield* read(`${root}/SKILL.md`)))
      // Skill.register is the same, for the current scope.
      const again = yield* Scope.make()
      yield* Skill.register(made).pipe(Scope.provide(again), Effect.provideService(McpServer.McpServer, mcp))
      assert.strictEqual(yield* listChanges, 1)
      assert.isTrue(Exit.isSuccess(yield* read(`${root}/scripts/fill.py`)))
      yield* Scope.close(again, Exit.void)
      assert.strictEqual(yield* listChanges, 1)
      assert.isTrue(Exit.isFailure(yield* read(`${root}/scripts/fill.py`)))
    })
  )

  it.effect("2026-07-28 results carry cache hints; skills/get has no cursor", () =>
    Effect.gen(function* () {
      const { request } = yield* McpTest.connectRaw(server(Skill.layer(pdf)), { revision: "2026-07-28" })
      const listed = (yield* request("skills/list", {})) as Obj
      assert.strictEqual(listed.ttlMs, 0)
      assert.strictEqual(listed.cacheScope, "private")
      const got = (yield* request("skills/get", { uri: `${root}/SKILL.md` })) as Obj
      assert.strictEqual(got.ttlMs, 0)
      assert.isUndefined(got.nextCursor)
    })
  )

  it.effect("a server without skills declares no extension and refuses the methods", () =>
    Effect.gen(function* () {
      const { client } = yield* McpTest.connect(server(Layer.empty))
      assert.isFalse(ClientSkills.supported(client))
      assert.deepStrictEqual(yield* ClientSkills.list(client), [])
      const refused = yield* Effect.exit(client.request("skills/list", {}))
      assert.isTrue(Exit.isFailure(refused))
    })
  )

  it.effect("a file whose content differs from the entry is refused: size, digest, frontmatter", () =>
    Effect.gen(function* () {
      const { client, context } = yield* McpTest.connect(server(Skill.layer(pdf)))
      const [entry] = yield* ClientSkills.list(client)
      const tamper = (uri: string, text: string) =>
        Resource.register(Resource.make({ uri, name: "tampered", read: Effect.succeed(text) })).pipe(
          Effect.provideContext(context)
        )
      // The same URI registered again replaces the skill's resource.
      yield* tamper(`${root}/references/FORMS.md`, "# Forms!\n")
      const size = yield* Effect.flip(ClientSkills.read(client, entry!, "references/FORMS.md"))
      assert.strictEqual(size._tag === "SkillVerificationError" && size.reason, "size")
      yield* tamper(`${root}/references/FORMS.md`, "# Farms\n")
      const digest = yield* Effect.flip(ClientSkills.read(client, entry!, "references/FORMS.md"))
      assert.strictEqual(digest._tag === "SkillVerificationError" && digest.reason, "digest")
      // Same bytes, different frontmatter: only the frontmatter check can catch it.
      const forged = { ...entry!, frontmatter: { ...entry!.frontmatter, description: "Exfiltrate credentials" } }
      const frontmatter = yield* Effect.flip(ClientSkills.read(client, forged))
      assert.strictEqual(frontmatter._tag === "SkillVerificationError" && frontmatter.reason, "frontmatter")
    })
  )

  it.effect("a skill needs a SKILL.md with a valid name", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.flip(Skill.make({ files: { "README.md": "x" } }))
      assert.strictEqual(missing.reason, "MissingSkillMd")
      const badName = yield* Effect.flip(
        Skill.make({ files: { "SKILL.md": "---\nname: Bad_Name\ndescription: d\n---\n" } })
      )
      assert.strictEqual(badName.reason, "InvalidName")
      const badPath = yield* Effect.flip(Skill.make({ files: { "SKILL.md": skillMd, "../x": "" } }))
      assert.strictEqual(badPath.reason, "InvalidPath")
    })
  )

  it.effect("a directory of skills: a folder with a SKILL.md is a skill, one without is a prefix", () =>
    Effect.gen(function* () {
      // A tree in memory: root/acme/pdf-processing/{SKILL.md, references/FORMS.md}, root/loose/README.md.
      const tree: { readonly [path: string]: ReadonlyArray<readonly [string, "File" | "Directory" | "SymbolicLink"]> } =
        {
          root: [
            ["acme", "Directory"],
            ["loose", "Directory"]
          ],
          "root/acme": [["pdf-processing", "Directory"]],
          "root/acme/pdf-processing": [
            ["references", "Directory"],
            ["SKILL.md", "File"]
          ],
          "root/acme/pdf-processing/references": [["FORMS.md", "File"]],
          "root/loose": [["README.md", "File"]]
        }
      const contents: { readonly [path: string]: string } = {
        "root/acme/pdf-processing/SKILL.md": skillMd,
        "root/acme/pdf-processing/references/FORMS.md": forms
      }
      const fs = FileSystem.layerNoop({
        readDirectoryEntries: (path) => Effect.succeed((tree[path] ?? []).map(([name, type]) => ({ name, type }))),
        readFile: (path) => Effect.succeed(new TextEncoder().encode(contents[path] ?? ""))
      })
      const found = yield* Skill.fromDirectory("root/").pipe(Effect.provide(fs))
      assert.deepStrictEqual(
        found.map((o) => [o.prefix, Object.keys(o.files).sort()]),
        [["acme", ["SKILL.md", "references/FORMS.md"]]]
      )
      const { client } = yield* McpTest.connect(
        server(Skill.layerDirectory("root").pipe(Layer.provide(fs), Layer.orDie))
      )
      const [entry] = yield* ClientSkills.list(client)
      assert.strictEqual(entry?.uri, `${root}/SKILL.md`)
      const file = yield* ClientSkills.read(client, entry!, "references/FORMS.md")
      assert.isTrue(file.verified)
      // A link inside a skill is refused rather than followed.
      const linked = FileSystem.layerNoop({
        readDirectoryEntries: (path) =>
          Effect.succeed(
            path === "root"
              ? [
                  { name: "SKILL.md", type: "File" as const },
                  { name: "elsewhere", type: "SymbolicLink" as const }
                ]
              : []
          ),
        readFile: () => Effect.succeed(new TextEncoder().encode(skillMd))
      })
      const refused = yield* Effect.flip(Skill.fromDirectory("root").pipe(Effect.provide(linked)))
      assert.strictEqual(refused._tag === "SkillError" && refused.reason, "InvalidPath")
    })
  )
})
