/**
 * A bare `node:http` relay in its own process (`httpRelay.ts <endpoint URL>`):
 * the bench's forwarder (keep-alive, body read, reply piped) passing every
 * request to one endpoint. W8 puts two in front of the one process, so two
 * calls in three cross one more process, as in the cluster, with nothing of
 * effect-mcp on that extra hop: what the extra process alone costs.
 */
import * as Forwarder from "../Forwarder.ts"
import { ready } from "./httpCommon.ts"

const relay = await Forwarder.start([process.argv[2]!])
ready(relay.url.slice(0, -"/mcp".length))
