/**
 * The target a traced request's SERVER span is named after
 * (`ServerSession.Options.spanTarget`): the tool of a `tools/call` or the
 * prompt of a `prompts/get` when the server has it, else none (the span is
 * named by the method alone). A client may ask for any name, and every name
 * a span takes is a value tracing backends keep: only registered ones, a
 * bounded set, name spans.
 */
import type * as Tracing from "@effect-mcp/engine/Tracing"
import type * as Server from "./server.ts"

/** The `spanTarget` of a server's sessions: one registry lookup, asked only when tracing is on. */
export const make =
  (state: Server.State): Tracing.SpanTarget =>
  (method, params) => {
    const name = params?.name
    if (typeof name !== "string") return undefined
    switch (method) {
      case "tools/call":
        return state.tools.get(name) === undefined ? undefined : name
      case "prompts/get":
        return state.prompts.get(name) === undefined ? undefined : name
      default:
        return undefined
    }
  }
