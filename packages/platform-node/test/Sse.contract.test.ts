/**
 * The transport contract over the legacy HTTP+SSE transport on real loopback
 * sockets: the SseClient against the server end of the session its event
 * stream opened on an SseServer, in both orientations. The known failures are
 * transport bugs, reported to the transport's owner.
 */
import * as TransportContract from "@effect-mcp/testing/TransportContract"
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpPairs from "./fixtures/httpPairs.ts"

const live = {
  test: it.live,
  // Long enough for an unbounded sender to get through every filling frame, so
  // the known cancellation failure fails every time rather than when the host is fast.
  settle: Effect.sleep("1 second"),
  // The client reads SSE events of at most 10 MiB (effect's Sse parser default); the
  // default 10 MiB payload, JSON-escaped, is larger and ends the event stream.
  largeSize: 4 * 1024 * 1024
} as const

TransportContract.suite("legacy HTTP+SSE: client -> server", HttpPairs.legacySse("client"), {
  ...live
})

TransportContract.suite("legacy HTTP+SSE: server -> client", HttpPairs.legacySse("server"), {
  ...live,
  knownFailures: {
    cancellation:
      "the server now suspends send (bounded buffers), but 10,000 frames of the default 16-byte fill fit in loopback socket buffers before it fills; passes with fillSize: 1024"
  }
})
