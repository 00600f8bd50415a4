/**
 * Skills (SEP-2640) through the gateway, in memory: over an upstream serving
 * skills the gateway declares the Skills extension and serves the upstream's
 * entries (`skills/list`, `skills/get`, `resources/directory/read`) and every
 * file of a skill, the supporting ones too; over an upstream without skills
 * it declares no extension. The raw test client checks the server's
 * declaration before it sends an extension method, as a host does. Under a
 * policy, a hidden skill is in no list and answered as one that is not
 * served.
 */
import type * as Skills from "@effect-mcp/protocol/Skills"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Resource from "@effect-mcp/server/Resource"
import * as Skill from "@effect-mcp/server/Skill"
import * as McpTest from "@effect-mcp/testing/McpTest"
import { assert, describe, it } from "@effect/vitest"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Gateway from "../src/Gateway.ts"
import type * as Policy from "../src/Policy.ts"
import { memory } from "./memoryConnector.ts"

const pdf: Skill.Options = {
  files: {
    "SKILL.md": "---\nname: pdf\ndescription: Fill PDF forms\n---\n\nRead references/FORMS.md first.\n",
    "references/FORMS.md": "# Forms\n"
  }
}
const review: Skill.Options = {
  prefix: "acme",
  files: { "SKILL.md": "---\nname: review\ndescription: Review a change\n---\n", "STYLE.md": "# Style\n" }
}

const serving = (...skills: ReadonlyArray<Skill.Options>) =>
  Skill.layer(...skills).pipe(Layer.orDie, Layer.provideMerge(McpServer.layer({ name: "skills", version: "1.0.0" })))

const plain = Resource.layer(Resource.make({ uri: "doc://readme", name: "readme", read: Effect.succeed("hi") })).pipe(
  Layer.provideMerge(McpServer.layer({ name: "plain", version: "1.0.0" }))
)

/** A gateway over the in-memory upstreams `upstreams`, by name, in that order. */
const gatewayOver = (
  upstreams: { readonly [name: string]: Layer.Layer<McpServer.McpServer> },
  policy?: Policy.Policy | undefined
) =>
  Effect.gen(function* () {
    const built: { [name: string]: Context.Context<McpServer.McpServer> } = {}
    for (const [name, layer] of Object.entries(upstreams)) built[name] = yield* Layer.build(layer)
    const mcpServers = Object.fromEntries(Object.keys(upstreams).map((name) => [name, { command: name }]))
    const context = yield* Layer.build(
      Gateway.layer({
        server: { name: "gateway", version: "1.0.0" },
        config: { mcpServers },
        policy,
        healthCheck: false
      }).pipe(Layer.provide(memory(built)))
    )
    return { context, upstreams: built }
  })

const extensionsOf = (client: McpTest.RawClient) =>
  (client.session.state.peerCapabilities as { readonly extensions?: object }).extensions

const listedSkills = (client: McpTest.RawClient) =>
  Effect.map(client.request("skills/list", {}), (r) => (r as { readonly skills: ReadonlyArray<Skills.Skill> }).skills)

const textOf = (result: unknown) =>
  (result as { readonly contents: ReadonlyArray<{ readonly text: string }> }).contents[0]!.text

const codeOf = (error: unknown) => (error as { readonly code: number }).code

describe("Gateway skills", () => {
  for (const revision of ["2025-11-25", "2026-07-28"] as const) {
    it.effect(`over an upstream serving skills, the extension is declared and its skills served (${revision})`, () =>
      Effect.gen(function* () {
        const { context, upstreams } = yield* gatewayOver({ skills: serving(pdf, review) })
        const client = yield* McpTest.makeRawClient({ revision }).pipe(Effect.provideContext(context))
        assert.deepStrictEqual(extensionsOf(client), { "io.modelcontextprotocol/skills": { directoryRead: true } })
        // The upstream's own entries, digests and all (what the client verifies the files against).
        const direct = yield* McpTest.makeRawClient({ revision }).pipe(Effect.provideContext(upstreams.skills!))
        const entries = yield* listedSkills(direct)
        assert.deepStrictEqual(yield* listedSkills(client), entries)
        const manifest = "skill://pdf/SKILL.md"
        const got = (yield* client.request("skills/get", { uri: manifest })) as { readonly skill: Skills.Skill }
        assert.deepStrictEqual(
          got.skill,
          entries.find((e) => e.uri === manifest)
        )
        // A supporting file is read through, though only the SKILL.md is listed.
        assert.strictEqual(
          textOf(yield* client.request("resources/read", { uri: "skill://pdf/references/FORMS.md" })),
          "# Forms\n"
        )
        assert.strictEqual(
          textOf(yield* client.request("resources/read", { uri: "skill://acme/review/STYLE.md" })),
          "# Style\n"
        )
        const folder = (yield* client.request("resources/directory/read", { uri: "skill://pdf/" })) as {
          readonly resources: ReadonlyArray<{ readonly uri: string; readonly mimeType?: string }>
        }
        assert.deepStrictEqual(
          folder.resources.map((r) => [r.uri, r.mimeType]),
          [
            ["skill://pdf/SKILL.md", "text/markdown"],
            ["skill://pdf/references", "inode/directory"]
          ]
        )
        assert.strictEqual(
          codeOf(yield* Effect.flip(client.request("skills/get", { uri: "skill://none/SKILL.md" }))),
          -32602
        )
      })
    )
  }

  it.effect("over upstreams without skills, no extension is declared", () =>
    Effect.gen(function* () {
      const { context } = yield* gatewayOver({ plain })
      const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      assert.isUndefined(extensionsOf(client))
      assert.strictEqual(textOf(yield* client.request("resources/read", { uri: "doc://readme" })), "hi")
    })
  )

  it.effect("a skill an upstream adds later is served once the upstream announces it", () =>
    Effect.gen(function* () {
      const { context, upstreams } = yield* gatewayOver({ plain, skills: serving(pdf) })
      const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      assert.deepStrictEqual(
        (yield* listedSkills(client)).map((s) => s.uri),
        ["skill://pdf/SKILL.md"]
      )
      yield* client.drain
      const added = yield* Skill.make(review)
      yield* Skill.register(added).pipe(Effect.provideContext(upstreams.skills!), Scope.provide(yield* Scope.make()))
      // Announced as a change of the resources (once for the SKILL.md, once for the skill): waited for, not timed.
      let uris = (yield* listedSkills(client)).map((s) => s.uri)
      while (uris.length < 2) {
        const notice = yield* Queue.take(client.notifications)
        if (notice.method === "notifications/resources/list_changed")
          uris = (yield* listedSkills(client)).map((s) => s.uri)
      }
      assert.deepStrictEqual(uris, ["skill://acme/review/SKILL.md", "skill://pdf/SKILL.md"])
      assert.strictEqual(
        textOf(yield* client.request("resources/read", { uri: "skill://acme/review/STYLE.md" })),
        "# Style\n"
      )
    })
  )

  it.effect("a skill the policy hides is in no list, and answered as one that is not served", () =>
    Effect.gen(function* () {
      // The second upstream's items are hidden from everyone (no principal in memory).
      const { context } = yield* gatewayOver({ a: serving(pdf), b: serving(review) }, (item) => item.upstream !== "b")
      const client = yield* McpTest.makeRawClient({ revision: "2025-11-25" }).pipe(Effect.provideContext(context))
      assert.deepStrictEqual(extensionsOf(client), { "io.modelcontextprotocol/skills": { directoryRead: true } })
      assert.deepStrictEqual(
        (yield* listedSkills(client)).map((s) => s.uri),
        ["skill://pdf/SKILL.md"]
      )
      const get = (yield* Effect.flip(client.request("skills/get", { uri: "skill://acme/review/SKILL.md" }))) as {
        readonly code: number
        readonly message: string
      }
      assert.deepStrictEqual([get.code, get.message], [-32602, "Unknown skill: skill://acme/review/SKILL.md"])
      const read = (yield* Effect.flip(client.request("resources/read", { uri: "skill://acme/review/STYLE.md" }))) as {
        readonly code: number
      }
      assert.strictEqual(read.code, -32002)
      const folder = (yield* Effect.flip(client.request("resources/directory/read", { uri: "skill://acme/" }))) as {
        readonly code: number
        readonly message: string
      }
      assert.deepStrictEqual([folder.code, folder.message], [-32602, "Not a directory: skill://acme"])
      // The visible upstream's skill is served as ever.
      assert.strictEqual(
        textOf(yield* client.request("resources/read", { uri: "skill://pdf/references/FORMS.md" })),
        "# Forms\n"
      )
    })
  )
})
