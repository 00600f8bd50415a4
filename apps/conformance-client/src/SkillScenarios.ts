/**
 * What the client does in the Skills extension's client scenarios (SEP-2640,
 * 0.2.0-alpha.12): list the server's skills and nothing more (a host reads
 * no skill file ahead of need), or list them and load each: its `SKILL.md`
 * read and verified against the entry (size, digest, frontmatter), then its
 * other files, each verified. A file that fails verification ends the
 * scenario with the error: nothing after it is read.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Skills from "@effect-mcp/client/Skills"
import * as Effect from "effect/Effect"
import type { Scenario } from "./Scenarios.ts"

/** Lists every skill; reads none of their files. */
const listOnly: Scenario = () =>
  Effect.gen(function* () {
    const client = yield* McpClient.McpClient
    const skills = yield* Skills.list(client)
    yield* Effect.logDebug(`listed ${skills.length} skill(s)`)
  })

/** Lists every skill and loads each: SKILL.md first, then the files it lists, all verified. */
const load: Scenario = () =>
  Effect.gen(function* () {
    const client = yield* McpClient.McpClient
    for (const skill of yield* Skills.list(client)) {
      yield* Skills.read(client, skill)
      const files = skill.resources === "dynamic" ? [] : skill.resources.filter((r) => r.uri !== skill.uri)
      for (const file of files) yield* Skills.read(client, skill, file.uri)
    }
  })

/** Scenario name -> what the client does. */
export const scenarios: ReadonlyArray<readonly [string, Scenario]> = [
  ["sep-2640-client-no-prefetch", listOnly],
  ["sep-2640-client-verify-digest", load],
  ["sep-2640-client-verify-size", load],
  ["sep-2640-client-verify-frontmatter", load]
]
