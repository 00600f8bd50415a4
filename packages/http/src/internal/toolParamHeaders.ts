/**
 * What the Streamable HTTP client remembers of SEP-2243: the `x-mcp-header`
 * declarations of the tools listed through it, so that each `tools/call` of
 * a stateless revision carries its `Mcp-Param-*` headers without the
 * session layer above telling it anything. The schemas are walked once, when
 * a `tools/list` result passes by; a call costs a Map lookup by tool name.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Predicate from "effect/Predicate"
import * as ParamHeaders from "../ParamHeaders.ts"
import * as Headers from "./httpHeaders.ts"

export interface ToolParamHeaders {
  /** Notes the `tools/list` requests of stateless revisions among those being sent. */
  readonly watch: (requests: ReadonlyArray<JsonRpc.Request>) => void
  /** Learns the declarations of the tools in the responses to watched requests. */
  readonly learn: (messages: ReadonlyArray<JsonRpc.Message>) => void
  /** The `Mcp-Param-*` headers of a `tools/call` (none for other messages and unknown tools). */
  readonly headersFor: (message: JsonRpc.Message) => Readonly<Record<string, string>>
}

const none: Readonly<Record<string, string>> = Object.freeze({})

// A listing interrupted on a stateless revision gets no reply: the oldest ids watched are let go.
const maxWatched = 256

type Json = { readonly [key: string]: unknown }

export const make = (): ToolParamHeaders => {
  const listIds = new Set<JsonRpc.RequestId>()
  const declared = new Map<string, ReadonlyArray<ParamHeaders.Declaration>>()

  const remember = (result: unknown) => {
    const tools = Predicate.isObject(result) ? (result as Json).tools : undefined
    if (!Array.isArray(tools)) return
    for (const tool of tools as ReadonlyArray<unknown>) {
      if (!Predicate.isObject(tool) || typeof (tool as Json).name !== "string") continue
      const name = (tool as Json).name as string
      const { declarations, problems } = ParamHeaders.scan((tool as Json).inputSchema)
      // A tool with an invalid annotation is left out of the client's listing: nothing is mirrored for it.
      if (problems.length > 0 || declarations.length === 0) declared.delete(name)
      else declared.set(name, declarations)
    }
  }

  return {
    watch: (requests) => {
      for (const request of requests) {
        if (request.method === "tools/list" && Headers.isStatelessVersion(Headers.metaVersionOf(request))) {
          listIds.add(request.id)
          if (listIds.size > maxWatched) listIds.delete(listIds.values().next().value!)
        }
      }
    },
    learn: (messages) => {
      if (listIds.size === 0) return
      for (const message of messages) {
        if (!JsonRpc.isResponse(message) || message.id === null || !listIds.delete(message.id)) continue
        if (JsonRpc.isSuccess(message)) remember(message.result)
      }
    },
    headersFor: (message) => {
      if (declared.size === 0 || !("method" in message) || message.method !== "tools/call") return none
      const params = (message as JsonRpc.Request).params as Json | undefined
      const name = params?.name
      const found = typeof name === "string" ? declared.get(name) : undefined
      return found === undefined ? none : ParamHeaders.headersFor(found, params?.arguments)
    }
  }
}
