/**
 * The stdio floor, loaded by `floorStdio.ts`: newline-delimited JSON in, the echo result out, with no
 * framework. Lines are split in linear time (chunks are kept until a newline
 * arrives, then joined once).
 */
import { answer, type Message } from "../Floor.ts"
import { lines } from "../Lines.ts"

lines(process.stdin, (line) => {
  process.stdout.write(`${JSON.stringify(answer(JSON.parse(line) as Message))}\n`)
})
process.stdin.on("end", () => process.exit(0))
