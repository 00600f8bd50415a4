/**
 * The client's Skills (SEP-2640) against `@modelcontextprotocol/server`
 * 2.4.0's skills extension (a `SkillCatalog` over in-memory files) on
 * 2026-07-28: the declaration, the listing, `skills/get`, folder reads, and
 * files read and verified against the SDK's entries (digests computed by
 * the SDK, checked by us).
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Skills from "@effect-mcp/client/Skills"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as ProtocolSkills from "@effect-mcp/protocol/Skills"
import * as Transport from "@effect-mcp/engine/Transport"
import { McpServer } from "@modelcontextprotocol/server"
import { memorySkillFiles, SkillsExtension } from "@modelcontextprotocol/server/ext/skills"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import * as Effect from "effect/Effect"
import { clientInfo } from "./fixtures.ts"
import { SdkTransportAdapter } from "./sdkTransport.ts"

const skillMd =
  "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nUse FORMS.md.\n"
const forms = "# Forms\n"

const against = Effect.gen(function* () {
  const catalog = yield* Effect.promise(() =>
    SkillsExtension.load(
      memorySkillFiles({ "pdf-processing/SKILL.md": skillMd, "pdf-processing/references/FORMS.md": forms }),
      { onWarning: () => {} }
    )
  )
  const [sdkEnd, clientEnd] = yield* MemoryTransport.makePair()
  const handle = serveStdio(
    () => {
      const server = new McpServer({ name: "sdk-skills", version: "2.4.0" })
      catalog.attach(server)
      return server
    },
    { transport: new SdkTransportAdapter(sdkEnd) as never }
  )
  yield* Effect.addFinalizer(() => Effect.promise(() => handle.close()))
  return yield* McpClient.make({ clientInfo }).pipe(Effect.provideService(Transport.Transport, clientEnd))
})

describe("client Skills -> @modelcontextprotocol/server 2.4.0", () => {
  it.effect("lists, gets, reads folders and reads verified files of the SDK's catalog", () =>
    Effect.gen(function* () {
      const client = yield* against
      assert.strictEqual(client.revision, "2026-07-28")
      assert.isTrue(Skills.supported(client))
      const skills = yield* Skills.list(client)
      assert.deepStrictEqual(
        skills.map((s) => s.uri),
        ["skill://pdf-processing/SKILL.md"]
      )
      const entry = skills[0]!
      assert.deepStrictEqual(entry.frontmatter, {
        name: "pdf-processing",
        description: "Extract, fill, and assemble PDF documents"
      })
      assert.deepStrictEqual(yield* Skills.get(client, entry.uri), entry)
      const manifest = yield* Skills.read(client, entry)
      assert.isTrue(manifest.verified)
      assert.strictEqual(manifest.body, "\nUse FORMS.md.\n")
      const file = yield* Skills.read(client, entry, "references/FORMS.md")
      assert.strictEqual(file.text, forms)
      assert.isTrue(Skills.directoryRead(client))
      const children = yield* Skills.readDirectory(client, "skill://pdf-processing")
      assert.includeMembers(
        children.map((c) => (c.mimeType === ProtocolSkills.directoryMimeType ? `${c.uri}/` : c.uri)),
        ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/"]
      )
    })
  )
})
