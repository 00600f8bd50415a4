/**
 * Raw JSON-RPC over Streamable HTTP for the task tests: a 2025-11-25 session
 * (initialize, then requests with its id; JSON responses) and 2026-07-28
 * stateless requests declaring the Tasks extension, with headers of the
 * caller's (a token, say).
 */
import * as Effect from "effect/Effect"

// biome-ignore lint/suspicious/noExplicitAny: JSON read by path in assertions
export type Json = any

/** A session's requests; each answers the JSON-RPC response (`result` or `error`). */
export interface Rpc {
  readonly request: (method: string, params: object) => Effect.Effect<Json>
}

/** POSTs one JSON-RPC message; the response and its JSON body. */
export const post = (url: string, headers: Record<string, string>, body: object) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(body)
    })
    const text = await response.text()
    return { response, json: text === "" ? undefined : (JSON.parse(text) as Json) }
  })

/** A 2025-11-25 session over Streamable HTTP (JSON responses); `headers` go on every request. */
export const session = (url: string, headers: Record<string, string> = {}): Effect.Effect<Rpc> =>
  Effect.gen(function* () {
    const init = yield* post(url, headers, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "restart", version: "1" } }
    })
    const sessionHeaders = {
      ...headers,
      "mcp-session-id": init.response.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-11-25"
    }
    yield* post(url, sessionHeaders, { jsonrpc: "2.0", method: "notifications/initialized" })
    let id = 1
    return {
      request: (method, params) =>
        Effect.map(post(url, sessionHeaders, { jsonrpc: "2.0", id: id++, method, params }), ({ json }) => json)
    }
  })

/** A 2026-07-28 stateless request declaring the Tasks extension; `headers` are added. */
export const stateless = (
  url: string,
  method: string,
  params: { readonly taskId?: string; readonly [key: string]: unknown },
  headers: Record<string, string> = {}
) =>
  Effect.map(
    post(
      url,
      {
        ...headers,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
        ...(params.taskId === undefined ? {} : { "mcp-name": params.taskId })
      },
      {
        jsonrpc: "2.0",
        id: 1,
        method,
        params: {
          ...params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
            "io.modelcontextprotocol/clientInfo": { name: "restart", version: "1" }
          }
        }
      }
    ),
    ({ json }) => json
  )
