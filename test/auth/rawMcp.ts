/** Raw MCP requests over HTTP with a bearer token, for the tests of protected servers. */
import * as Effect from "effect/Effect"
import * as http from "node:http"

/** An `initialize` request of the 2025-11-25 revision. */
export const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

/** What `post` reads of an answer. */
export interface Answer {
  readonly status: number
  readonly challenge: string | null
  readonly session: string | null
  readonly text: string
}

/** POSTs a JSON-RPC message with `token` (none when undefined) and reads the whole answer. */
export const post = (url: string, body: unknown, token: string | undefined, headers: Record<string, string> = {}) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...headers
      },
      body: JSON.stringify(body)
    })
    return {
      status: response.status,
      challenge: response.headers.get("www-authenticate"),
      session: response.headers.get("mcp-session-id"),
      text: await response.text()
    }
  })

/**
 * POSTs a JSON-RPC message with each of `authorizations` as its own
 * `Authorization` header line (fetch would merge them into one) and reads the
 * status and the challenge.
 */
export const postWithAuthorizations = (url: string, body: unknown, authorizations: ReadonlyArray<string>) =>
  Effect.callback<{ readonly status: number; readonly challenge: string | undefined }>((resume) => {
    const request = http.request(url, { method: "POST" }, (response) => {
      response.resume()
      response.on("end", () =>
        resume(
          Effect.succeed({
            status: response.statusCode ?? 0,
            challenge: response.headers["www-authenticate"]
          })
        )
      )
    })
    request.setHeader("accept", "application/json, text/event-stream")
    request.setHeader("content-type", "application/json")
    request.setHeader("authorization", [...authorizations])
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(JSON.stringify(body))
    return Effect.sync(() => request.destroy())
  })
