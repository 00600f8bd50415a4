/**
 * The effect-mcp echo server as a Cloudflare Worker (W9): `WebHandler.make` over the echo server, stateless (a
 * Worker keeps no session between requests), `export default { fetch }`. Bundled by `Workers.ts` and served by
 * workerd.
 */
import * as WebHandler from "@effect-mcp/server/WebHandler"
import * as EchoServer from "../EchoServer.ts"

const app = WebHandler.make(EchoServer.layer, { stateless: true })

export default { fetch: app.handler }
