/**
 * The transport contract over real stdio: one end is the stdio client, which
 * spawns a relay child; the relay joins its stdin/stdout to a Unix socket on
 * which the other end, the stdio server transport, runs in this process (its
 * `Stdio` is the socket). Every frame thus crosses a real child's pipes.
 */
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as TransportContract from "@effect-mcp/testing/TransportContract"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as PlatformError from "effect/PlatformError"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const relay = fileURLToPath(new URL("./fixtures/relay.ts", import.meta.url))

const socketError = (method: string) => (cause: unknown) =>
  PlatformError.systemError({ _tag: "Unknown", module: "Stdio", method, cause })

/** Listens on a fresh Unix socket; the connection the relay makes is the server end's stdio. */
const listen = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "effect-mcp-stdio-"))
    const socketPath = path.join(dir, "relay.sock")
    const server = net.createServer({ allowHalfOpen: true })
    const connection = new Promise<net.Socket>((resolve) => server.once("connection", resolve))
    server.listen(socketPath)
    return { dir, socketPath, server, connection }
  }),
  ({ dir, server }) =>
    Effect.sync(() => {
      server.close()
      fs.rmSync(dir, { recursive: true, force: true })
    })
)

const stdioOver = (socket: net.Socket): Stdio.Stdio =>
  Stdio.make({
    args: Effect.succeed([]),
    stdin: NodeStream.fromReadable({ evaluate: () => socket, onError: socketError("stdin"), closeOnDone: false }),
    stdout: (options) =>
      NodeSink.fromWritable({ evaluate: () => socket, onError: socketError("stdout"), endOnDone: options?.endOnDone }),
    stderr: () => Sink.drain
  })

// The server end's raw socket, for writing malformed lines past its encoder.
const rawSockets = new WeakMap<object, net.Socket>()

const makePair = (first: "client" | "server") =>
  Effect.gen(function* () {
    const { socketPath, connection } = yield* listen
    const client = yield* NodeStdio.makeClient({
      command: process.execPath,
      args: [relay, socketPath],
      shutdown: { exitGrace: "200 millis", termGrace: "200 millis", killGrace: "2 seconds" }
    })
    const socket = yield* Effect.promise(() => connection)
    yield* Effect.addFinalizer(() => Effect.sync(() => socket.destroy()))
    const server = yield* StdioTransport.makeServer().pipe(Effect.provideService(Stdio.Stdio, stdioOver(socket)))
    rawSockets.set(server, socket)
    return first === "client" ? ([client, server] as const) : ([server, client] as const)
  })

const live = {
  test: it.live,
  // Pipes and socket buffers hold hundreds of KiB; 10,000 frames of 1 KiB overflow them.
  fillSize: 1024,
  // Real time, because the subject is a send that never completes without a reader: only
  // waiting shows it. A sender that finishes sooner ends the wait (and fails the case) at once.
  settle: Effect.sleep("200 millis"),
  // Both ends take a frame as a plain call while their outgoing buffer has room, and push frames to a
  // receiver that attaches itself (the client always; the server here reads a socket stream, so it declines).
  fastPaths: { trySend: true, push: true }
} as const

TransportContract.suite("stdio client (spawning a relay) -> stdio server", makePair("client"), live)

TransportContract.suite("stdio server -> stdio client (spawning a relay)", makePair("server"), {
  ...live,
  malformed: {
    sendRaw: (end, text) =>
      Effect.sync(() => {
        rawSockets.get(end)?.write(`${text}\n`)
      })
  }
})
