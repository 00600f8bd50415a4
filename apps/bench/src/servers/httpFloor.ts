/**
 * The HTTP floor (`httpFloor.ts`): `node:http`, the echo result as a JSON
 * body; an `initialize` also gets a session id, kept in a map. Nothing else.
 */
import * as McpHeaders from "@effect-mcp/http/McpHeaders"
import { randomUUID } from "node:crypto"
import { answer, type Message } from "../Floor.ts"
import { listen, readBody } from "./httpCommon.ts"
// A session is an id in a map: the least any server must keep per session.
const sessions = new Map<string, { readonly created: number }>()
listen(async (req, res) => {
  const message = JSON.parse(await readBody(req)) as Message
  if (message.id === undefined) {
    res.writeHead(202).end()
    return
  }
  const headers: Record<string, string | number> = { "content-type": "application/json" }
  if (message.method === "initialize") {
    const id = randomUUID()
    sessions.set(id, { created: Date.now() })
    headers[McpHeaders.SESSION_ID] = id
  }
  const body = JSON.stringify(answer(message))
  headers["content-length"] = Buffer.byteLength(body)
  res.writeHead(200, headers).end(body)
})
