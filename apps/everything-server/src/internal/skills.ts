/**
 * The skills of the Skills extension (SEP-2640) the conformance suite reads:
 * one skill with a supporting file in a subfolder (so `skills/list`,
 * `skills/get`, `resources/read` of each file and `resources/directory/read`
 * of the skill folder and its subfolder all have something to serve), and a
 * second under an organisational prefix (the first listed, so it has a
 * subfolder too).
 */
import * as Skill from "@effect-mcp/server/Skill"
import * as Layer from "effect/Layer"

const pdf: Skill.Options = {
  files: {
    "SKILL.md": [
      "---",
      "name: pdf-processing",
      "description: Extract, fill, and assemble PDF documents",
      "license: MIT",
      "metadata:",
      "  author: effect-mcp",
      "---",
      "",
      "# PDF processing",
      "",
      "Read references/FORMS.md before filling a form.",
      ""
    ].join("\n"),
    "references/FORMS.md": "# Forms\n\nFill each field, then flatten the document.\n"
  }
}

const review: Skill.Options = {
  prefix: "effect-mcp",
  files: {
    "SKILL.md":
      "---\nname: code-review\ndescription: Review a change for correctness and style\n---\n\nRead the diff first.\n",
    "checklists/STYLE.md": "# Style\n\nNames say what things are.\n"
  }
}

/** The fixture skills, registered for as long as the Layer lives (their SKILL.md files are valid: made at start). */
export const layer = Layer.orDie(Skill.layer(pdf, review))
