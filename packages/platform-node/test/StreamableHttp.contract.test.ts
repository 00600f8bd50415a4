/**
 * The transport contract over Streamable HTTP on real loopback sockets: the
 * StreamableHttpClient against the server end of the session it opened on a
 * StreamableHttpServer, in both response modes (SSE streams and JSON bodies)
 * and in both orientations.
 *
 * The server answers only requests it received (a response goes to its
 * request's exchange), and the client learns that the server ended the
 * session from a 404, reported as `Closed` (SessionExpired); the suite's
 * `solicitedResponses` and `closedOnPeerClose` say so.
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
  // default 10 MiB payload, JSON-escaped, is larger and never arrives.
  largeSize: 4 * 1024 * 1024
} as const

for (const mode of ["sse", "json"] as const) {
  TransportContract.suite(
    `Streamable HTTP (${mode} responses): client -> server`,
    HttpPairs.streamableHttp("client", mode),
    { ...live, solicitedResponses: 1, closedOnPeerClose: 0 }
  )
  TransportContract.suite(
    `Streamable HTTP (${mode} responses): server -> client`,
    HttpPairs.streamableHttp("server", mode),
    {
      ...live,
      solicitedResponses: 0,
      closedOnPeerClose: 1,
      // The GET stream's buffer is bounded, but behind it loopback socket buffers hold
      // 10,000 frames of the default 16-byte fill; frames of 1 KiB overflow them.
      fillSize: 1024
    }
  )
}
