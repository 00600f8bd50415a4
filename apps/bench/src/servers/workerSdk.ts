/**
 * The SDK's echo server as a Cloudflare Worker (W9): the SDK's web-standard Streamable HTTP transport
 * (`WebStandardStreamableHTTPServerTransport`), stateless as its documentation shows it (a new server and
 * transport for each request, no session id), `export default { fetch }`. Bundled by `Workers.ts` and served by
 * workerd.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import * as SdkEchoServer from "../SdkEchoServer.ts"

export default {
  fetch: async (request: Request): Promise<Response> => {
    const server = SdkEchoServer.make()
    // No session id generator: stateless (the option left out, which the SDK reads as `sessionIdGenerator: undefined`).
    const transport = new WebStandardStreamableHTTPServerTransport({})
    await server.connect(transport)
    return transport.handleRequest(request)
  }
}
