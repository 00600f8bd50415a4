// A scripted MCP server over stdio for the CLI's exit-code tests, in plain JavaScript (no build, no imports):
// it answers `initialize` with no capabilities but tools, lists one tool, and then does what its first argument
// says: "exit-on-call" exits when a tool is called (the connection is lost mid-command), "hang-on-call" never
// answers a tool call (the request times out), "hang-on-list" never answers `tools/list`, "refuse" answers
// `initialize` with a JSON-RPC error, "stall" stops reading its stdin once initialized (so it never sees the
// stdin's end either) and says `stalled <pid>` on stderr, staying up until a signal ends it (a minute at most),
// "exit-once-initialized" exits (code 7) as soon as the client said it is initialized.
import * as readline from "node:readline"

const mode = process.argv[2] ?? "exit-on-call"
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)

const lines = readline.createInterface({ input: process.stdin })
let stalled = false
lines.on("line", (line) => {
  // Lines already read with the one that stalled it still come, and are left unread as the rest.
  if (stalled) return
  const message = JSON.parse(line)
  if (mode === "stall" && message.method === "notifications/initialized") {
    stalled = true
    lines.close()
    process.stdin.pause()
    // A paused pipe holds no handle open: this keeps the process up.
    setTimeout(() => process.exit(0), 60_000)
    return console.error(`stalled ${process.pid}`)
  }
  if (mode === "exit-once-initialized" && message.method === "notifications/initialized") {
    console.error("leaving on purpose")
    return process.exit(7)
  }
  if (message.id === undefined) return
  switch (message.method) {
    case "initialize":
      if (mode === "refuse") return send({ id: message.id, error: { code: -32600, message: "not today" } })
      return send({
        id: message.id,
        result: {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "scripted", version: "1.0.0" }
        }
      })
    case "tools/list":
      if (mode === "hang-on-list") return
      return send({ id: message.id, result: { tools: [{ name: "crash", inputSchema: { type: "object" } }] } })
    case "tools/call":
      if (mode === "hang-on-call") return
      console.error("crashing on purpose")
      return process.exit(7)
    default:
      return send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } })
  }
})
