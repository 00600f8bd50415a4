/**
 * The last step of a test's authorization gate in front of an MCP server: the
 * request, once the gate let it through, goes on to `target` with its body
 * and headers but without the `Authorization` header (the server behind the
 * gate checks no token), and the answer streams back as it comes.
 */
import * as http from "node:http"

/** Forwards `request` (whose body was read as `body`) to `target`, answering on `response`. */
export const forward = (
  target: URL,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  body: Buffer
): void => {
  const headers = { ...request.headers, host: target.host }
  delete headers.authorization
  const forwarded = http.request(
    { host: target.hostname, port: target.port, method: request.method, path: request.url, headers },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    }
  )
  forwarded.on("error", () => response.destroy())
  forwarded.end(body)
}
