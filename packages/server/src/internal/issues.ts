/**
 * One message for a Schema decode or encode error of a tool's arguments or
 * output, or of a client's form answer: each issue on its path (keys cut, as the client sent them), the real
 * reason of a union first, at most `issueLimit` issues.
 *
 * Two things hide the real reason in effect's own formatting. A union lists
 * one issue per member it tried, in member order: as for incoming messages
 * (protocol's IncomingValidator), the deepest issue leads. And the JSON form
 * of `Schema.Number` is itself a union (a finite number, or the strings
 * "Infinity", "-Infinity", "NaN"): a value of neither kind, say the string
 * "5", is reported as `Expected "Infinity" | "-Infinity" | "NaN"`, the one
 * thing the caller did not mean; it is reported as `Expected number`.
 */
import { deepestFirst } from "@effect-mcp/protocol/IncomingValidator"
import * as SchemaIssue from "effect/SchemaIssue"
import { echo, listIssues } from "./params.ts"

interface Line {
  readonly path: ReadonlyArray<unknown>
  readonly message: string
}

const format = SchemaIssue.makeFormatterStandardSchemaV1()

// Leaves (and filters, whose message covers what is under them) are worded by
// effect; only the nodes that group issues are walked here.
const collect = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>, out: Array<Line>): void => {
  switch (issue._tag) {
    case "Pointer":
      collect(issue.issue, [...path, ...issue.path], out)
      break
    case "Composite":
      for (const inner of issue.issues) collect(inner, path, out)
      break
    case "AnyOf":
      if (issue.issues.length === 0) leaf(issue, path, out)
      else {
        const members: Array<Line> = []
        for (const inner of issue.issues) collect(inner, path, members)
        for (const line of deepestFirst(members)) out.push(line)
      }
      break
    case "Encoding":
      // Only a value of the wrong kind fails the number's wire union (JSON has no NaN).
      if (issue.ast._tag === "Number" && issue.issue._tag === "AnyOf") {
        leaf(new SchemaIssue.InvalidType(issue.ast, issue.input), path, out)
      } else collect(issue.issue, path, out)
      break
    default:
      leaf(issue, path, out)
  }
}

const leaf = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>, out: Array<Line>): void => {
  for (const line of format(issue).issues) {
    out.push({ path: line.path === undefined ? path : [...path, ...line.path], message: line.message })
  }
}

// The path names the client's keys: each is quoted cut.
const pathOf = (path: ReadonlyArray<unknown>): string =>
  path.map((p) => echo(typeof p === "object" && p !== null ? String((p as { key: unknown }).key) : String(p))).join(".")

/** The issues of a failed decode or encode as one message, the real reason first. */
export const describe = (issue: SchemaIssue.Issue): string => {
  const lines: Array<Line> = []
  collect(issue, [], lines)
  return listIssues(
    lines.map((line) => (line.path.length === 0 ? line.message : `${pathOf(line.path)}: ${line.message}`))
  )
}
