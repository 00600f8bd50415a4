/**
 * The client command the conformance suite runs, in front of the real client:
 * `node gate.ts <socket> <command> <args...>` (the suite appends the server
 * URL). It waits for a permit from the test's gate (a Unix socket served by
 * `ClientSuite.ts`: a line arrives once this client may start), runs the
 * command with the same environment and stdio, and exits with its code. The
 * permit is returned when the socket closes, which it does when this process
 * ends, however it ends.
 *
 * The suite starts every scenario at once; this bounds how many clients run
 * at a time without changing what each one does. The launcher names its
 * scenario (`MCP_CONFORMANCE_SCENARIO`) on the socket's first line.
 */
import { spawn } from "node:child_process"
import * as Net from "node:net"

const [socketPath, command, ...args] = process.argv.slice(2)
if (socketPath === undefined || command === undefined) {
  process.stderr.write("usage: gate.ts <socket> <command> [args...]\n")
  process.exit(2)
}

const gate = Net.connect(socketPath)
// The scenario this client runs (the suite sets it), so that the gate can run a timed one alone.
gate.write(`${process.env.MCP_CONFORMANCE_SCENARIO ?? ""}\n`)
gate.on("error", (error) => {
  process.stderr.write(`conformance gate: ${error.message}\n`)
  process.exit(2)
})
gate.once("data", () => {
  const client = spawn(command, args, { stdio: "inherit" })
  client.once("error", (error) => {
    process.stderr.write(`conformance gate: ${error.message}\n`)
    process.exit(2)
  })
  // A client ended by a signal counts as failed.
  client.once("exit", (code) => process.exit(code ?? 1))
})
