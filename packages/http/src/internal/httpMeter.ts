/**
 * Counting an HTTP transport's bytes for `McpMetrics` (only when metrics are
 * on: the servers wrap their handlers once, when made, so an unmetered
 * server does nothing per request). What is counted is what crosses the
 * wire: a POST body as read (`httpWire.readFrame`), and every response body,
 * whole or streamed (SSE events as they are written); headers are not.
 */
import * as Effect from "effect/Effect"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import type * as McpMetrics from "@effect-mcp/engine/McpMetrics"

/** `response`, its body counted as sent by `meter` (a streamed body chunk by chunk, as it is written). */
export const response = (
  response: HttpServerResponse.HttpServerResponse,
  meter: McpMetrics.TransportMeter
): HttpServerResponse.HttpServerResponse => {
  const body = response.body
  switch (body._tag) {
    case "Uint8Array":
      meter.sent(body.contentLength)
      return response
    case "Stream":
      return HttpServerResponse.setBody(
        response,
        HttpBody.stream(
          Stream.mapArray(body.stream, (chunks) => {
            let bytes = 0
            for (const chunk of chunks) bytes += chunk.length
            meter.sent(bytes)
            return chunks
          }),
          body.contentType,
          body.contentLength
        )
      )
    default:
      return response
  }
}

/** A handler whose responses `meter` counts; the handler itself when metrics are off. */
export const handler = <E, R>(
  handle: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  meter: McpMetrics.TransportMeter | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  meter === undefined ? handle : Effect.map(handle, (sent) => response(sent, meter))
