/**
 * The transport contract over the legacy HTTP+SSE transport on real loopback
 * sockets: the SseClient against the server end of the session its event
 * stream opened on an SseServer, in both orientations.
 */
import * as TransportContract from "@effect-mcp/testing/TransportContract"
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpPairs from "./fixtures/httpPairs.ts"

const live = {
  test: it.live,
  // Real time, because the subject is a send that never completes without a reader: only
  // waiting shows it. Long enough for a sender that never suspends to get through every
  // filling frame; a sender that finishes sooner ends the wait (and fails the case) at once.
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
  // The event stream's buffer is bounded, but behind it loopback socket buffers hold
  // 10,000 frames of the default 16-byte fill; frames of 1 KiB overflow them.
  fillSize: 1024
})
