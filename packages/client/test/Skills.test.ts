/**
 * The client's Skills against scripted servers: what no effect-mcp server
 * sends (a `"dynamic"` skill, an entry for another URI, a looping cursor, a
 * SKILL.md without readable frontmatter) is handled as the extension says.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Skills from "@effect-mcp/client/Skills"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import * as ProtocolSkills from "@effect-mcp/protocol/Skills"
import * as McpTest from "@effect-mcp/testing/McpTest"
import * as Effect from "effect/Effect"

const frontmatter = { name: "notes", description: "Take notes" }
const skillMd = "---\nname: notes\ndescription: Take notes\n---\nBody\n"
const dynamic = { uri: "skill://notes/SKILL.md", frontmatter, resources: "dynamic" }

const scripted = (handlers: ReadonlyArray<readonly [string, (params: unknown) => unknown]>) =>
  McpTest.makeClientFor(
    ServerSession.make({
      serverInfo: { name: "scripted", version: "1.0.0" },
      capabilities: { resources: {}, extensions: { [ProtocolSkills.extensionId]: {} } },
      handlers: new Map(
        handlers.map(([method, answer]) => [method, (params: unknown) => Effect.sync(() => answer(params))])
      )
    }),
    { revision: "2026-07-28" }
  )

const read = (text: string) => (params: unknown) => ({
  contents: [{ uri: (params as { readonly uri: string }).uri, mimeType: "text/markdown", text }],
  ttlMs: 0,
  cacheScope: "private"
})

describe("client Skills against scripted servers", () => {
  it.effect("a dynamic skill's files come back unverified; its SKILL.md frontmatter is still compared", () =>
    Effect.gen(function* () {
      const client = yield* scripted([
        [ProtocolSkills.listMethod, () => ({ skills: [dynamic], ttlMs: 0, cacheScope: "private" })],
        ["resources/read", read(skillMd)]
      ])
      assert.isFalse(Skills.directoryRead(client))
      const [entry] = yield* Skills.list(client)
      const manifest = yield* Skills.read(client, entry!)
      assert.isFalse(manifest.verified)
      assert.strictEqual(manifest.body, "Body\n")
      const other = yield* Skills.read(client, entry!, "any/file.md")
      assert.strictEqual(other.uri, "skill://notes/any/file.md")
      const forged = { ...entry!, frontmatter: { ...frontmatter, description: "Other" } }
      const refused = yield* Effect.flip(Skills.read(client, forged))
      assert.strictEqual(refused._tag === "SkillVerificationError" && refused.reason, "frontmatter")
    })
  )

  it.effect("a SKILL.md without readable frontmatter is refused", () =>
    Effect.gen(function* () {
      const client = yield* scripted([["resources/read", read("no frontmatter here\n")]])
      const refused = yield* Effect.flip(Skills.read(client, dynamic as ProtocolSkills.Skill))
      assert.strictEqual(refused._tag === "SkillVerificationError" && refused.reason, "frontmatter")
    })
  )

  it.effect("skills/get answering another skill fails; a repeated cursor ends the listing", () =>
    Effect.gen(function* () {
      const client = yield* scripted([
        [ProtocolSkills.getMethod, () => ({ skill: dynamic, ttlMs: 0, cacheScope: "private" })],
        [ProtocolSkills.listMethod, () => ({ skills: [], nextCursor: "again", ttlMs: 0, cacheScope: "private" })]
      ])
      const wrong = yield* Effect.flip(Skills.get(client, "skill://other/SKILL.md"))
      assert.strictEqual(wrong._tag, "InvalidResult")
      const looped = yield* Effect.flip(Skills.list(client))
      assert.strictEqual(looped._tag === "PaginationError" && looped.reason, "CursorRepeated")
    })
  )

  it.effect("an entry with a malformed digest is an invalid result", () =>
    Effect.gen(function* () {
      const bad = { ...dynamic, resources: [{ uri: dynamic.uri, digest: "md5:1", size: 1 }] }
      const client = yield* scripted([
        [ProtocolSkills.listMethod, () => ({ skills: [bad], ttlMs: 0, cacheScope: "private" })]
      ])
      const refused = yield* Effect.flip(Skills.list(client))
      assert.strictEqual(refused._tag, "InvalidResult")
    })
  )
})
