/**
 * Preloaded (`node --import`) into the gateway and mcp-proxy processes of W10, which run as their users run
 * them (`effect-mcp gateway`, `mcp-proxy`): prints `LISTENING <url>` on stdout once the process's HTTP server
 * listens (Node's `net.server.listen` tracing channel), so the bench connects when the port is open, whatever
 * each command prints. It changes nothing else in the process.
 */
import * as DiagnosticsChannel from "node:diagnostics_channel"
import type * as Net from "node:net"

let reported = false
DiagnosticsChannel.tracingChannel("net.server.listen").asyncEnd.subscribe((message) => {
  const address = (message as { readonly server: Net.Server }).server.address()
  if (reported || typeof address !== "object" || address === null) return
  reported = true
  process.stdout.write(`LISTENING http://127.0.0.1:${address.port}/mcp\n`)
})
