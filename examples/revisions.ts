/**
 * Revisions and negotiation, in one process over an in-memory transport pair:
 * the notes server speaks all five MCP revisions side by side; a client
 * limited to one revision gets that one; a default client gets the newest
 * (the stateless 2026-07-28, found by probing `server/discover`), and falls
 * back to the `initialize` handshake with a server that does not speak it; a
 * client and a server with no revision in common fail with a typed error.
 *
 *   node --conditions=@effect-mcp/source examples/revisions.ts
 */
import * as assert from "node:assert/strict"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { NotesServer } from "./notes-server.ts"

/**
 * Serves `server` on one end of a memory pair and connects a client on the
 * other; both live until the enclosing scope closes.
 */
const connect = (server: Layer.Layer<McpServer.McpServer>, options: McpClient.Options) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair()
    yield* McpServer.serve.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provide(server),
      Effect.forkScoped
    )
    return yield* McpClient.make(options).pipe(Effect.provideService(Transport.Transport, clientEnd))
  })

const clientInfo = { name: "revisions-example", version: "1.0.0" }

const program = Effect.gen(function* () {
  // The same server and the same client code on every revision.
  for (const version of ProtocolVersion.all) {
    const client = yield* connect(NotesServer, { clientInfo, supportedVersions: [version] })
    const tools = yield* Stream.runCollect(client.tools)
    yield* Console.log(`client offering only ${version} -> ${client.revision}, ${tools.length} tools`)
    assert.equal(client.revision, version)
    assert.equal(tools.length, 6)
  }

  // A client offering everything gets the newest revision.
  const newest = yield* connect(NotesServer, { clientInfo })
  yield* Console.log(`client offering every revision -> ${newest.revision}`)
  assert.equal(newest.revision, ProtocolVersion.latest)

  // A server that does not speak 2026-07-28: the client's discover probe is refused and it falls
  // back to initialize, which settles on the newest revision both speak.
  const olderServer = McpServer.layer({
    name: "older",
    version: "1.0.0",
    supportedVersions: ["2024-11-05", "2025-06-18"]
  })
  const fallback = yield* connect(olderServer, { clientInfo })
  yield* Console.log(`server speaking 2024-11-05 and 2025-06-18 -> ${fallback.revision}`)
  assert.equal(fallback.revision, "2025-06-18")

  // Nothing in common: a typed InitializeError.
  const refused = yield* connect(olderServer, { clientInfo, supportedVersions: ["2026-07-28"] }).pipe(Effect.flip)
  yield* Console.log(`client offering only 2026-07-28 to it -> ${refused._tag} (${refused.reason})`)
  assert.equal(refused._tag, "InitializeError")
  assert.equal(refused.reason, "UnsupportedVersion")

  yield* Console.log("ok: revisions")
})

NodeRuntime.runMain(Effect.scoped(program))
