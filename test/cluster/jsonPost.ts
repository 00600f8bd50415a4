/**
 * A 2025-11-25 JSON-RPC POST read whole (the cluster scale and kill tests run
 * their runners with `--json`): its status, the `Mcp-Session-Id` it names,
 * and its body.
 */

/** The revision these tests speak. */
export const REVISION = "2025-11-25"

/** What the simple text tool of the everything server answers. */
export const EXPECTED = "This is a simple text response for testing."

const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** POSTs `body` to `url`, in session `sessionId` when given. */
export const post = async (url: string, body: unknown, sessionId?: string) => {
  const response = await fetch(url, {
    method: "POST",
    headers:
      sessionId === undefined ? headers : { ...headers, "mcp-session-id": sessionId, "mcp-protocol-version": REVISION },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, sessionId: response.headers.get("mcp-session-id"), text }
}

/**
 * Opens a 2025-11-25 session at `url` (`initialize`, then `notifications/initialized`) named `name`, its
 * initialize request id `s<n>-init`; returns its `Mcp-Session-Id`, or throws what went wrong.
 */
export const openSession = async (url: string, n: number, name: string): Promise<string> => {
  const init = await post(url, {
    jsonrpc: "2.0",
    id: `s${n}-init`,
    method: "initialize",
    params: { protocolVersion: REVISION, capabilities: {}, clientInfo: { name, version: "1" } }
  })
  if (init.status !== 200 || init.sessionId === null) {
    throw new Error(`session ${n}: initialize got ${init.status} ${init.text}`)
  }
  const initialized = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, init.sessionId)
  if (initialized.status !== 202) throw new Error(`session ${n}: initialized got ${initialized.status}`)
  return init.sessionId
}

/** Calls the everything server's simple text tool as request `id` of `sessionId`; a failed fetch reads as status 0. */
export const callSimpleText = (url: string, id: string, sessionId: string) =>
  post(
    url,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name: "test_simple_text", arguments: {} } },
    sessionId
  ).catch((error: unknown) => ({ status: 0, sessionId: null, text: String(error) }))
