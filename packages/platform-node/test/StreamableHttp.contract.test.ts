/**
 * The transport contract over Streamable HTTP on real loopback sockets: the
 * StreamableHttpClient against the server end of the session it opened on a
 * StreamableHttpServer, in both response modes (SSE streams and JSON bodies)
 * and in both orientations.
 *
 * The server answers only requests it received (a response goes to its
 * request's exchange), and the client learns that the server ended the
 * session from a 404, reported as `Closed` (SessionExpired); the suite's
 * `solicitedResponses` and `closedOnPeerClose` say so. The known failures are
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
  // default 10 MiB payload, JSON-escaped, is larger and never arrives.
  largeSize: 4 * 1024 * 1024
} as const

for (const mode of ["sse", "json"] as const) {
  TransportContract.suite(
    `Streamable HTTP (${mode} responses): client -> server`,
    HttpPairs.streamableHttp("client", mode),
    {
      ...live,
      solicitedResponses: 1,
      closedOnPeerClose: 0,
      knownFailures: {
        large:
          "a request's POST is ordered only up to its upload: the server may still take a later, smaller POST first"
      }
    }
  )
  TransportContract.suite(
    `Streamable HTTP (${mode} responses): server -> client`,
    HttpPairs.streamableHttp("server", mode),
    {
      ...live,
      solicitedResponses: 0,
      closedOnPeerClose: 1,
      knownFailures: {
        cancellation: "the server session's send never suspends: its SSE connection queues are unbounded"
      }
    }
  )
}
