/**
 * `@modelcontextprotocol/client` 2.4.0's `SkillsClient` against an
 * effect-mcp server's skills (SEP-2640) on 2026-07-28: the SDK sees the
 * extension and `directoryRead`, lists and gets our entries (which it
 * validates), and reads every file verified against our digests and sizes
 * (and a `SKILL.md`'s frontmatter, as its own YAML reader reads it, against
 * our entry's); on 2025-11-25, skills added and removed at run time reach it
 * with `notifications/resources/list_changed`, and its `resources/list` shows
 * each skill's `SKILL.md` only.
 */
import { assert, describe, it } from "@effect/vitest"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Skill from "@effect-mcp/server/Skill"
import { Client, type Transport as Transport2 } from "@modelcontextprotocol/client"
import { SkillsClient, SkillVerificationError } from "@modelcontextprotocol/client/ext/skills"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as SdkAdapter from "./sdkAdapter.ts"

const skillMd =
  "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nUse FORMS.md.\n"
const forms = "# Forms\n"
const script = new Uint8Array([0, 1, 2, 255])

const features = Skill.layer({
  prefix: "acme",
  files: { "SKILL.md": skillMd, "references/FORMS.md": forms, "scripts/run.bin": script }
})

const connectTo = (
  server: Layer.Layer<McpServer.McpServer>,
  pin: "2025-11-25" | "2026-07-28",
  setup: (client: Client) => void = () => {}
) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(server)
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    // 2025-era revisions are the SDK's legacy handshake (initialize): pinning is for 2026-07-28 on.
    const client = new Client(
      { name: "sdk2-client", version: "2.4.0" },
      { versionNegotiation: { mode: pin === "2026-07-28" ? { pin } : "legacy" } }
    )
    setup(client)
    const transport = (yield* SdkAdapter.make(clientEnd)) as unknown as Transport2
    yield* Effect.promise(() => client.connect(transport))
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
    return { skills: new SkillsClient(client), client, context }
  })

const connect = Effect.map(
  connectTo(
    Layer.provideMerge(Layer.orDie(features), McpServer.layer({ name: "skills", version: "1.0.0" })),
    "2026-07-28"
  ),
  ({ skills }) => skills
)

describe("@modelcontextprotocol/client 2.4.0 SkillsClient -> effect-mcp server", () => {
  it.effect("lists, gets and reads every file, verified by the SDK", () =>
    Effect.gen(function* () {
      const skills = yield* connect
      assert.isTrue(skills.supported)
      assert.isTrue(skills.directoryRead)
      const listing = yield* Effect.promise(() => skills.list())
      assert.deepStrictEqual(listing.invalid, [])
      assert.strictEqual(listing.ttlMs, 0)
      const [entry] = listing.skills
      assert.strictEqual(entry?.uri, "skill://acme/pdf-processing/SKILL.md")
      const got = yield* Effect.promise(() => skills.get(entry!.uri))
      assert.deepStrictEqual(got.skill, entry)

      const manifest = yield* Effect.promise(() => skills.read(entry!))
      assert.isTrue(manifest.verified)
      assert.deepStrictEqual(manifest.frontmatter, entry!.frontmatter)
      const formsFile = yield* Effect.promise(() => skills.read(entry!, "references/FORMS.md"))
      assert.strictEqual(formsFile.text, forms)
      const binary = yield* Effect.promise(() => skills.read(entry!, "scripts/run.bin"))
      assert.deepStrictEqual([...binary.bytes], [...script])

      const unlisted = yield* Effect.promise(() => skills.read(entry!, "secrets.txt").catch((e: unknown) => e))
      assert.instanceOf(unlisted, SkillVerificationError)

      const directory = yield* Effect.promise(() => skills.readDirectory("skill://acme/pdf-processing"))
      assert.deepStrictEqual(
        directory.resources.map((r) => r.uri),
        [
          "skill://acme/pdf-processing/SKILL.md",
          "skill://acme/pdf-processing/references",
          "skill://acme/pdf-processing/scripts"
        ]
      )
    })
  )

  it.effect("the SDK reads a skill with lists of maps and |/> blocks as our entry lists it", () =>
    Effect.gen(function* () {
      // Each of these once came back different from the SDK's reading, which then refused the SKILL.md.
      const yaml = [
        "name: notes",
        "description: |",
        "  first",
        "",
        "  # not a comment",
        "summary: >",
        "  one",
        "  two",
        "",
        "  three",
        "authors:",
        "  - name: Ada",
        "    role: author",
        ""
      ].join("\n")
      const server = Layer.provideMerge(
        Layer.orDie(Skill.layer({ files: { "SKILL.md": `---\n${yaml}---\nBody.\n` } })),
        McpServer.layer({ name: "skills", version: "1.0.0" })
      )
      const { skills } = yield* connectTo(server, "2026-07-28")
      const [entry] = (yield* Effect.promise(() => skills.list())).skills
      const frontmatter = {
        name: "notes",
        description: "first\n\n# not a comment\n",
        summary: "one two\nthree\n",
        authors: [{ name: "Ada", role: "author" }]
      }
      assert.deepStrictEqual(entry?.frontmatter, frontmatter)
      const manifest = yield* Effect.promise(() => skills.read(entry!))
      assert.isTrue(manifest.verified)
      assert.deepStrictEqual(manifest.frontmatter, frontmatter)
    })
  )

  it.effect("2025-11-25: skills added and removed at run time reach the SDK with resources/list_changed", () =>
    Effect.gen(function* () {
      const changes = counter()
      const { skills, client, context } = yield* connectTo(
        McpServer.layer({ name: "plugins", version: "1.0.0", declare: ["skills"] }),
        "2025-11-25",
        (c) =>
          c.setNotificationHandler("notifications/resources/list_changed", () => {
            changes.add()
          })
      )
      assert.strictEqual(client.getNegotiatedProtocolVersion(), "2025-11-25")
      assert.isTrue(skills.supported)
      assert.deepStrictEqual((yield* Effect.promise(() => skills.list())).skills, [])
      const made = yield* Skill.make({ prefix: "acme", files: { "SKILL.md": skillMd, "references/FORMS.md": forms } })
      const scope = yield* Scope.make()
      yield* Skill.register(made).pipe(Scope.provide(scope), Effect.provideContext(context))
      yield* Effect.promise(() => changes.reach(1))
      assert.strictEqual(changes.count(), 1)
      const [entry] = (yield* Effect.promise(() => skills.list())).skills
      assert.strictEqual(entry?.uri, "skill://acme/pdf-processing/SKILL.md")
      const file = yield* Effect.promise(() => skills.read(entry!, "references/FORMS.md"))
      assert.strictEqual(file.text, forms)
      // A resource browser sees the skill's SKILL.md only.
      const listed = yield* Effect.promise(() => client.listResources())
      assert.deepStrictEqual(
        listed.resources.map((r) => r.uri),
        ["skill://acme/pdf-processing/SKILL.md"]
      )
      yield* Scope.close(scope, Exit.void)
      yield* Effect.promise(() => changes.reach(2))
      assert.strictEqual(changes.count(), 2)
      assert.deepStrictEqual((yield* Effect.promise(() => skills.list())).skills, [])
    })
  )
})

/**
 * Counts notifications; `reach(n)` resolves when the count reaches n (the SDK is promise-based, so the wait is a
 * promise, with no timer: a missing notification fails the test by its timeout).
 */
const counter = () => {
  let n = 0
  const waiters: Array<{ readonly at: number; readonly resolve: () => void }> = []
  return {
    count: () => n,
    add: () => {
      n++
      for (const w of waiters.filter((w) => w.at <= n)) w.resolve()
    },
    reach: (at: number) => (n >= at ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ at, resolve })))
  }
}
