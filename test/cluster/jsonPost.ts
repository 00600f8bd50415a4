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
