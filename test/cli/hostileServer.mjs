// A scripted MCP server over stdio whose every text tries to drive the terminal it is printed on, for the CLI's
// escaping test, in plain JavaScript (no build, no imports). Its name, instructions, tools, prompts, resources, a
// tool's result and progress, an error (a call of the tool `fail`) and a log line carry a screen clear (CSI 2J), a
// window title and a clipboard write (OSC 0 and OSC 52, each ended by BEL), a C1 CSI (U+009B), a carriage return, a
// backspace and a DEL. The log line is sent when the first ping comes (the client listens by then), once.
// TerminalEscapes.test.ts has the same text.
import * as readline from "node:readline"

/** Every attack at once. */
const hostile = "<\x1b[2J\x1b]0;title\x07\x1b]52;c;aGk=\x07\u009b31m\rforged\b\x7f>"

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)

let logged = false
const lines = readline.createInterface({ input: process.stdin })
lines.on("line", (line) => {
  const message = JSON.parse(line)
  if (message.id === undefined) return
  const reply = (result) => send({ id: message.id, result })
  switch (message.method) {
    case "initialize":
      return reply({
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {}, prompts: {}, resources: {}, logging: {} },
        serverInfo: { name: `server${hostile}`, version: "1.0.0" },
        instructions: `first line${hostile}\nsecond line`
      })
    case "tools/list":
      return reply({
        tools: [
          {
            name: `tool${hostile}`,
            description: `description${hostile}`,
            inputSchema: { type: "object", properties: { [`arg${hostile}`]: { type: "string" } } }
          }
        ]
      })
    case "tools/call": {
      if (message.params.name === "fail") {
        return send({ id: message.id, error: { code: -32602, message: `bad${hostile}` } })
      }
      const progressToken = message.params._meta?.progressToken
      if (progressToken !== undefined) {
        send({ method: "notifications/progress", params: { progressToken, progress: 1, message: hostile } })
      }
      return reply({ content: [{ type: "text", text: `result${hostile}\nline two\twith a tab` }] })
    }
    case "prompts/list":
      return reply({ prompts: [{ name: `prompt${hostile}`, arguments: [{ name: `arg${hostile}`, required: true }] }] })
    case "prompts/get":
      return reply({ messages: [{ role: "user", content: { type: "text", text: `message${hostile}` } }] })
    case "resources/list":
      return reply({
        resources: [{ uri: `test://resource${hostile}`, name: `name${hostile}`, mimeType: "text/plain" }]
      })
    case "resources/templates/list":
      return reply({ resourceTemplates: [] })
    case "resources/read":
      return reply({ contents: [{ uri: message.params.uri, text: `contents${hostile}` }] })
    case "logging/setLevel":
      return reply({})
    case "ping":
      reply({})
      if (!logged) {
        logged = true
        send({
          method: "notifications/message",
          params: { level: "warning", logger: `logger${hostile}`, data: `log${hostile}\nEND` }
        })
      }
      return
    default:
      return send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } })
  }
})
