/**
 * The stdio floor, loaded by `floorStdio.ts`: newline-delimited JSON in, the echo result out, with no
 * framework. Lines are split in linear time (chunks are kept until a newline
 * arrives, then joined once). It answers `initialize` too and ignores
 * notifications: the least an MCP client needs to face it (W2's effect-mcp
 * client -> floor server).
 */
import { answer, initializeAnswer, type Message } from "../Floor.ts"
import { lines } from "../Lines.ts"

lines(process.stdin, (line) => {
  const message = JSON.parse(line) as Message
  if (message.id === undefined) return
  const reply = message.method === "initialize" ? initializeAnswer(message) : answer(message)
  process.stdout.write(`${JSON.stringify(reply)}\n`)
})
process.stdin.on("end", () => process.exit(0))
