/**
 * The `resultType` of a 2026-07-28 result says how to read the rest of it,
 * and one the client does not recognize MUST be treated as invalid (basic,
 * ResultType): such an answer fails its request with `InvalidResult`
 * (`Malformed`) instead of passing for a finished one. Recognized: `complete`,
 * `input_required` (answered by inputRequired.ts) and `task` (the Tasks
 * extension, which the client declares: tasks.ts follows it). An absent
 * `resultType` means `complete`, as for a server of an earlier revision.
 */
import * as McpResult from "@effect-mcp/protocol/McpResult"
import * as Effect from "effect/Effect"
import { InvalidResult } from "../ClientError.ts"

const recognized: ReadonlySet<unknown> = new Set([McpResult.complete, McpResult.inputRequired, "task"])

/** The result as it came, or `InvalidResult` when its `resultType` is one this client does not recognize. */
export const check = (method: string, result: unknown): Effect.Effect<unknown, InvalidResult> => {
  const resultType =
    typeof result === "object" && result !== null ? (result as { readonly resultType?: unknown }).resultType : undefined
  return resultType === undefined || recognized.has(resultType)
    ? Effect.succeed(result)
    : Effect.fail(
        new InvalidResult({
          method,
          reason: "Malformed",
          message: `${method}: unrecognized resultType ${JSON.stringify(resultType)}`
        })
      )
}
