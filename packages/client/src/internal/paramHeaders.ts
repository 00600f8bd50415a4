/**
 * SEP-2243 on the tool listing (2026-07-28): a tool whose `x-mcp-header`
 * annotations are invalid is left out of the result, with a warning naming
 * the tool and the reason, and the other tools are kept. The headers
 * themselves are the transport's business (StreamableHttpClient remembers
 * the declarations of the tools it carried in `tools/list` results).
 */
import * as ParamHeaders from "@effect-mcp/http/ParamHeaders"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

/** The listing less the tools whose annotations are invalid (the same object when none are). */
export const admit = (result: Tools.ListToolsResult): Effect.Effect<Tools.ListToolsResult> =>
  Effect.suspend(() => {
    let kept: Array<Tools.Tool> | undefined
    const warnings: Array<string> = []
    result.tools.forEach((tool, index) => {
      const checked = ParamHeaders.declarations(tool.inputSchema)
      if (Result.isSuccess(checked)) {
        kept?.push(tool)
        return
      }
      kept ??= result.tools.slice(0, index)
      warnings.push(`tools/list: leaving out tool ${tool.name}: invalid x-mcp-header: ${checked.failure}`)
    })
    if (kept === undefined) return Effect.succeed(result)
    return Effect.as(
      Effect.forEach(warnings, (warning) => Effect.logWarning(warning), { discard: true }),
      { ...result, tools: kept }
    )
  })
