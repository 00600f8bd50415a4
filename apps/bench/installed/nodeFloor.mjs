// The Node floor of a cold start: no library at all, `initialize` answered from one line of stdin.
import * as Readline from "node:readline"

export const answerInitialize = () =>
  Readline.createInterface({ input: process.stdin }).on("line", (line) => {
    const request = JSON.parse(line)
    const result = { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "floor", version: "1.0.0" } }
    process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: request.id, result })}\n`)
  })

if (import.meta.main) answerInitialize()
