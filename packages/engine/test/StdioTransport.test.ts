import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Peer from "@effect-mcp/engine/Peer"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Result from "effect/Result"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { forkIdle, runIdle } from "./fixtures.ts"
import { bytes, makeChild, makeStdio } from "./stdioFakes.ts"

const serverInfo = { name: "stdio-test-server", version: "1.0.0" }
const clientInfo = { name: "stdio-test-client", version: "1.0.0" }
const ping = (id: number) => JSON.stringify(JsonRpc.request(id, "ping"))

/** Collects a transport's incoming frames in a fiber of the test's scope. */
const collect = (incoming: Stream.Stream<Transport.Incoming, Transport.TransportError>) =>
  Effect.gen(function* () {
    const frames: Array<Transport.Incoming> = []
    // Completed (and replaced) on every frame and at the end of the stream.
    let arrived = Deferred.makeUnsafe<void>()
    const signal = () => {
      const current = arrived
      arrived = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(current, Exit.void)
    }
    let ended = false
    const fiber = yield* incoming.pipe(
      Stream.runForEach((frame) =>
        Effect.sync(() => {
          frames.push(frame)
          signal()
        })
      ),
      Effect.ensuring(
        Effect.sync(() => {
          ended = true
          signal()
        })
      ),
      Effect.forkScoped
    )
    const waitFor = (n: number): Effect.Effect<Array<Transport.Incoming>> =>
      Effect.suspend(() =>
        frames.length >= n || ended ? Effect.succeed(frames) : Effect.andThen(Deferred.await(arrived), waitFor(n))
      )
    return { frames, fiber, waitFor }
  })

const messageOf = (frame: Transport.Incoming | undefined) => {
  if (frame === undefined || Result.isFailure(frame)) return assert.fail(`expected a message, got ${String(frame)}`)
  return frame.success as JsonRpc.Message
}

const failureOf = (frame: Transport.Incoming | undefined) => {
  if (frame === undefined || Result.isSuccess(frame)) return assert.fail(`expected a decode failure`)
  return frame.failure
}

const transportFailure = (exit: Exit.Exit<unknown, unknown> | undefined): Transport.TransportError => {
  if (exit === undefined || Exit.isSuccess(exit)) return assert.fail(`expected a failure, got ${String(exit)}`)
  const reason = exit.cause.reasons[0]
  if (reason?._tag !== "Fail" || !(reason.error instanceof Transport.TransportError)) {
    return assert.fail(`expected a TransportError, got ${String(exit.cause)}`)
  }
  return reason.error
}

describe("StdioTransport server side (fake Stdio)", () => {
  it.effect("serves a session: a request split across chunks gets one response line on stdout", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer().pipe(Effect.provideService(Stdio.Stdio, fake.stdio))
      yield* ServerSession.make({ serverInfo, capabilities: {} }).pipe(
        Effect.provideService(Transport.Transport, server)
      )
      const line = `${ping(1)}\n`
      yield* fake.stdin.write(line.slice(0, 7))
      yield* fake.stdin.write(line.slice(7, 20))
      yield* fake.stdin.write(line.slice(20))
      const [response] = yield* fake.stdout.lines(1)
      assert.deepStrictEqual(JSON.parse(response!), JsonRpc.success(1, {}))
      assert.strictEqual(fake.stdout.text(), `${JSON.stringify(JsonRpc.success(1, {}))}\n`)
    })
  )

  it.effect("accepts CRLF and blank lines, and a last line without terminator at end of input", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer().pipe(Effect.provideService(Stdio.Stdio, fake.stdio))
      const reader = yield* collect(server.incoming)
      yield* fake.stdin.write(`${ping(1)}\r\n\n\r\n${ping(2)}\n${ping(3)}`)
      yield* fake.stdin.end
      yield* Fiber.join(reader.fiber)
      assert.deepStrictEqual(reader.frames.map(messageOf), [
        JsonRpc.request(1, "ping"),
        JsonRpc.request(2, "ping"),
        JsonRpc.request(3, "ping")
      ])
    })
  )

  it.effect("a malformed or over-long line arrives as a decode failure and reading goes on", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer({ maxFrameBytes: 64 }).pipe(
        Effect.provideService(Stdio.Stdio, fake.stdio)
      )
      const reader = yield* collect(server.incoming)
      yield* fake.stdin.write(`{not json\n{"padding":"${"x".repeat(100)}"}\n${ping(7)}\n`)
      const frames = yield* reader.waitFor(3)
      assert.strictEqual(failureOf(frames[0]).reason, "ParseError")
      assert.strictEqual(failureOf(frames[1]).reason, "FrameTooLarge")
      assert.strictEqual(failureOf(frames[1]).code, -32600)
      assert.deepStrictEqual(messageOf(frames[2]), JsonRpc.request(7, "ping"))
    })
  )

  it.effect("a 10 MiB frame crosses each way in 64 KiB chunks", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer().pipe(Effect.provideService(Stdio.Stdio, fake.stdio))
      const reader = yield* collect(server.incoming)
      const data = "é😀x".repeat((10 * 1024 * 1024) / 4)
      const line = bytes(`${JSON.stringify(JsonRpc.request(1, "big", { data }))}\n`)
      for (let offset = 0; offset < line.length; offset += 65536) {
        yield* fake.stdin.write(line.subarray(offset, offset + 65536))
      }
      const [frame] = yield* reader.waitFor(1)
      const received = messageOf(frame) as JsonRpc.Request
      assert.isTrue((received.params as { data: string }).data === data)
      yield* server.send(JsonRpc.success(1, { data }))
      const [out] = yield* fake.stdout.lines(1)
      assert.isTrue((JSON.parse(out!) as { result: { data: string } }).result.data === data)
    })
  )

  it.effect("end of stdin ends the session cleanly; later sends fail with Closed", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer().pipe(Effect.provideService(Stdio.Stdio, fake.stdio))
      const session = yield* ServerSession.make({ serverInfo, capabilities: {} }).pipe(
        Effect.provideService(Transport.Transport, server)
      )
      yield* fake.stdin.end
      const closed = yield* session.closed
      assert.isTrue(Exit.isSuccess(closed))
      const error = yield* Effect.flip(server.send(JsonRpc.notification("late")))
      assert.strictEqual(error.reason, "Closed")
    })
  )

  it.effect("a frame over maxFrameBytes is refused with FrameTooLarge and nothing is written", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer({ maxFrameBytes: 100 }).pipe(
        Effect.provideService(Stdio.Stdio, fake.stdio)
      )
      const error = yield* Effect.flip(server.send(JsonRpc.notification("big", { data: "é".repeat(40) })))
      assert.strictEqual(error.reason, "FrameTooLarge")
      yield* server.send(JsonRpc.notification("small"))
      const [line] = yield* fake.stdout.lines(1)
      assert.deepStrictEqual(JSON.parse(line!), JsonRpc.notification("small"))
    })
  )

  it.effect("a result over the frame limit is answered at once with an error naming the limit", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer({ maxFrameBytes: 300 }).pipe(
        Effect.provideService(Stdio.Stdio, fake.stdio)
      )
      const big: Session.Handler = () => Effect.succeed({ content: [{ type: "text", text: "x".repeat(1000) }] })
      yield* ServerSession.make({
        serverInfo,
        capabilities: { tools: {} },
        handlers: new Map([["tools/call", big]])
      }).pipe(Effect.provideService(Transport.Transport, server))
      const initialize = JsonRpc.request(1, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "c", version: "1" }
      })
      yield* fake.stdin.write(`${JSON.stringify(initialize)}\n`)
      yield* fake.stdin.write(`${JSON.stringify(JsonRpc.notification("notifications/initialized"))}\n`)
      yield* fake.stdin.write(`${JSON.stringify(JsonRpc.request(2, "tools/call", { name: "big", arguments: {} }))}\n`)
      // No clock moves: the answer comes at once, not at the caller's timeout.
      const [, answer] = yield* fake.stdout.lines(2)
      const response = JSON.parse(answer!) as JsonRpc.ErrorResponse
      assert.strictEqual(response.id, 2)
      assert.strictEqual(response.error.code, -32603)
      assert.include(response.error.message, "exceeds the limit of 300")
    })
  )

  it.effect("a response over the receiver's frame limit fails its request at once, naming the limit", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const transport = yield* StdioTransport.makeServer({ maxFrameBytes: 200 }).pipe(
        Effect.provideService(Stdio.Stdio, fake.stdio)
      )
      const peer = yield* Peer.make(transport, {
        request: () => Effect.succeed({}),
        errorObject: (_request, error) => McpError.toErrorObject(error),
        notification: () => Effect.void,
        refuseBatch: () => undefined,
        refuseInBatch: () => undefined,
        cancellable: () => true
      })
      const call = yield* Effect.forkChild(Effect.flip(peer.request("tools/call", { name: "big" })))
      const [sent] = yield* fake.stdout.lines(1)
      const id = (JSON.parse(sent!) as JsonRpc.Request).id
      yield* fake.stdin.write(`${JSON.stringify(JsonRpc.success(id, { text: "x".repeat(1000) }))}\n`)
      // No clock moves: the caller learns at once, not at its timeout.
      const error = yield* Fiber.join(call)
      assert.strictEqual(error._tag, "InternalError")
      assert.include(error.message, "frame exceeds 200 bytes")
      // An over-long request is answered with the error under its own id.
      yield* fake.stdin.write(`${JSON.stringify(JsonRpc.request(41, "tools/call", { text: "y".repeat(1000) }))}\n`)
      const [answer] = yield* fake.stdout.lines(1)
      const refusal = JSON.parse(answer!) as JsonRpc.ErrorResponse
      assert.strictEqual(refusal.id, 41)
      assert.strictEqual(refusal.error.code, -32600)
    })
  )

  it.effect("send suspends while the outgoing buffer is full, and resumes as stdout drains", () =>
    Effect.gen(function* () {
      const latch = yield* Deferred.make<void>()
      const written: Array<string> = []
      // Every write waits for the latch: stdout is blocked until the test opens it.
      const write = (chunk: string | Uint8Array) =>
        Effect.andThen(
          Deferred.await(latch),
          Effect.sync(() => written.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)))
        )
      const stdio = Stdio.make({
        args: Effect.succeed([]),
        stdin: Stream.never,
        stdout: () => Sink.forEach(write),
        stderr: () => Sink.drain
      })
      const server = yield* StdioTransport.makeServer({ outgoingCapacity: 2 }).pipe(
        Effect.provideService(Stdio.Stdio, stdio)
      )
      const sender = yield* forkIdle(
        Effect.forEach([1, 2, 3, 4, 5], (i) => server.send(JsonRpc.notification("n", { i })), { discard: true })
      )
      assert.isUndefined(sender.pollUnsafe(), "five frames fit a buffer of two while stdout is blocked")
      yield* Deferred.succeed(latch, undefined)
      yield* Fiber.join(sender)
      yield* server.close
      assert.deepStrictEqual(
        written.map((line) => (JSON.parse(line) as { params: { i: number } }).params.i),
        [1, 2, 3, 4, 5]
      )
    })
  )

  it.effect("close writes what was queued, ends stdout and incoming, and refuses later sends", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const server = yield* StdioTransport.makeServer().pipe(Effect.provideService(Stdio.Stdio, fake.stdio))
      const reader = yield* collect(server.incoming)
      yield* Effect.forEach([1, 2, 3], (i) => server.send(JsonRpc.notification("n", { i })), { discard: true })
      yield* server.close
      assert.strictEqual(fake.stdoutEndOnDone(), true)
      assert.isTrue(fake.stdout.ended(), "stdout ended")
      assert.strictEqual(yield* fake.stdout.lines(3).pipe(Effect.map((lines) => lines.length)), 3)
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(reader.fiber)), "incoming ended")
      const error = yield* Effect.flip(server.send(JsonRpc.notification("late")))
      assert.strictEqual(error.reason, "Closed")
      yield* server.close
    })
  )

  it.effect("layerServer routes the built-in loggers to stderr", () =>
    Effect.gen(function* () {
      const fake = yield* makeStdio
      const toStderr = yield* Effect.gen(function* () {
        yield* Transport.Transport
        return yield* Logger.LogToStderr
      }).pipe(Effect.provide(StdioTransport.layerServer()), Effect.provideService(Stdio.Stdio, fake.stdio))
      assert.isTrue(toStderr)
      assert.isFalse(yield* Logger.LogToStderr)
    })
  )
})

// ---------------------------------------------------------------------------

type Child = Effect.Success<ReturnType<typeof makeChild>>

const spawnClient = (child: Child, options: Partial<StdioTransport.ClientOptions> = {}) =>
  StdioTransport.makeClient({ command: "mcp-server", ...options }).pipe(
    Effect.provideService(ChildProcessSpawner.ChildProcessSpawner, child.spawner)
  )

/** Runs a ServerSession inside the fake child, over the server transport on the child's pipes. */
const serveInChild = (child: Child, handlers: ReadonlyMap<string, Session.Handler> = new Map()) =>
  Effect.gen(function* () {
    const stdio = Stdio.make({
      args: Effect.succeed([]),
      stdin: child.stdin.stream,
      stdout: (options) => child.stdout.sink(options?.endOnDone ?? false),
      stderr: () => Sink.drain
    })
    const transport = yield* StdioTransport.makeServer().pipe(Effect.provideService(Stdio.Stdio, stdio))
    return yield* ServerSession.make({ serverInfo, capabilities: { tools: {} }, handlers }).pipe(
      Effect.provideService(Transport.Transport, transport)
    )
  })

const shutdown = { exitGrace: "1 second", termGrace: "2 seconds", killGrace: "3 seconds" } as const

describe("StdioTransport client side (fake ChildProcessSpawner)", () => {
  it.effect("spawns the command with its args, env and cwd, and writes frames as lines to its stdin", () =>
    Effect.gen(function* () {
      const child = yield* makeChild({ exitOnStdinEnd: true })
      const client = yield* spawnClient(child, { args: ["--stdio"], env: { TOKEN: "t" }, cwd: "/srv" })
      const command = child.command()
      assert.strictEqual(command?._tag, "StandardCommand")
      if (command?._tag === "StandardCommand") {
        assert.strictEqual(command.command, "mcp-server")
        assert.deepStrictEqual(command.args, ["--stdio"])
        assert.strictEqual(command.options.cwd, "/srv")
        assert.deepStrictEqual(command.options.env, { TOKEN: "t" })
        assert.strictEqual(command.options.extendEnv, true)
      }
      assert.strictEqual(client.pid, 4242)
      yield* client.send(JsonRpc.notification("hello", { n: 1 }))
      yield* client.send([JsonRpc.request(1, "ping")])
      assert.deepStrictEqual(yield* child.stdin.lines(2), [
        JsonRpcCodec.encode(JsonRpc.notification("hello", { n: 1 })),
        JsonRpcCodec.encode([JsonRpc.request(1, "ping")])
      ])
    })
  )

  it.effect("a full session: ClientSession over the client side, ServerSession over the server side", () =>
    Effect.gen(function* () {
      const child = yield* makeChild({ exitOnStdinEnd: true })
      const echo: Session.Handler = (params) =>
        Effect.succeed({ content: [{ type: "text", text: JSON.stringify(params) }] })
      yield* serveInChild(child, new Map([["tools/call", echo]]))
      const transport = yield* spawnClient(child)
      const client = yield* ClientSession.make({
        clientInfo,
        capabilities: {},
        supportedVersions: ["2025-11-25"]
      }).pipe(Effect.provideService(Transport.Transport, transport))
      const result = (yield* client.request("tools/call", { name: "echo", arguments: { x: 1 } })) as {
        content: ReadonlyArray<{ text: string }>
      }
      assert.deepStrictEqual(JSON.parse(result.content[0]!.text), { name: "echo", arguments: { x: 1 } })
      yield* transport.close
      assert.deepStrictEqual(child.events, ["spawned", "stdin closed", "exit 0"])
      assert.isTrue(Exit.isSuccess(yield* client.closed))
    })
  )

  it.effect("shutdown: stdin closed, exitGrace, SIGTERM, termGrace, SIGKILL, each step on the Clock", () =>
    Effect.gen(function* () {
      const child = yield* makeChild({ exitOnStdinEnd: false, dieOnSigterm: false })
      const client = yield* spawnClient(child, { shutdown })
      const closing = yield* forkIdle(client.close)
      assert.deepStrictEqual(child.events, ["spawned", "stdin closed"])
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual(child.events, ["spawned", "stdin closed"])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(child.events, ["spawned", "stdin closed", "SIGTERM"])
      yield* TestClock.adjust("1999 millis")
      assert.deepStrictEqual(child.events, ["spawned", "stdin closed", "SIGTERM"])
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(closing)
      assert.deepStrictEqual(child.events, ["spawned", "stdin closed", "SIGTERM", "SIGKILL", "exit SIGKILL"])
      assert.deepStrictEqual(yield* client.exit, { code: null, signal: "SIGKILL" })
    })
  )

  it.effect("shutdown: a server that exits on SIGTERM is not killed; one that exits on EOF is not signalled", () =>
    Effect.gen(function* () {
      const stubborn = yield* makeChild({ exitOnStdinEnd: false })
      const a = yield* spawnClient(stubborn, { shutdown })
      const closing = yield* Effect.forkChild(a.close)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      assert.deepStrictEqual(stubborn.events, ["spawned", "stdin closed", "SIGTERM", "exit SIGTERM"])
      assert.deepStrictEqual(yield* a.exit, { code: null, signal: "SIGTERM" })

      const polite = yield* makeChild({ exitOnStdinEnd: true })
      const b = yield* spawnClient(polite, { shutdown })
      yield* b.close
      assert.deepStrictEqual(polite.events, ["spawned", "stdin closed", "exit 0"])
      assert.deepStrictEqual(yield* b.exit, { code: 0, signal: null })
    })
  )

  it.effect("a server exiting mid-session fails incoming with ServerExited (code, stderr tail)", () =>
    Effect.gen(function* () {
      const child = yield* makeChild({ exitOnStdinEnd: true })
      const client = yield* spawnClient(child)
      const reader = yield* collect(client.incoming)
      yield* child.stdout.write(`${JSON.stringify(JsonRpc.notification("last words"))}\n`)
      yield* child.stderr.write("fatal: out of cheese\n")
      yield* child.exit(3)
      const error = transportFailure(yield* Fiber.await(reader.fiber))
      assert.strictEqual(error.reason, "Closed")
      const exited = StdioTransport.serverExited(error)
      assert.isDefined(exited)
      assert.strictEqual(exited?.exitCode, 3)
      assert.strictEqual(exited?.signal, null)
      assert.strictEqual(exited?.stderrTail, "fatal: out of cheese\n")
      assert.include(exited?.message ?? "", "code 3")
      assert.deepStrictEqual(reader.frames.map(messageOf), [JsonRpc.notification("last words")])
      const late = yield* Effect.flip(client.send(JsonRpc.notification("late")))
      assert.strictEqual(late.reason, "Closed")
    })
  )

  it.effect("a session over a server that exits fails pending calls and closes with ServerExited", () =>
    Effect.gen(function* () {
      const child = yield* makeChild({ exitOnStdinEnd: true })
      yield* serveInChild(child, new Map([["tools/call", () => Effect.never]]))
      const transport = yield* spawnClient(child)
      const client = yield* ClientSession.make({
        clientInfo,
        capabilities: {},
        supportedVersions: ["2025-11-25"]
      }).pipe(Effect.provideService(Transport.Transport, transport))
      // Returns once the call has come to rest: sent, and waiting for its answer.
      const call = yield* forkIdle(client.request("tools/call", { name: "hang", arguments: {} }))
      yield* child.stderr.write("segfault\n")
      yield* child.exit(null, "SIGSEGV")
      const callError = yield* Effect.flip(Fiber.join(call))
      assert.strictEqual(callError._tag, "SessionClosed")
      const exited = StdioTransport.serverExited(transportFailure(yield* client.closed))
      assert.strictEqual(exited?.signal, "SIGSEGV")
      assert.strictEqual(exited?.exitCode, null)
      assert.strictEqual(exited?.stderrTail, "segfault\n")
    })
  )

  it.effect("a server that closes stdout and exits with code 0 ends incoming cleanly", () =>
    Effect.gen(function* () {
      const child = yield* makeChild({ exitOnStdinEnd: true })
      const client = yield* spawnClient(child)
      const reader = yield* collect(client.incoming)
      yield* child.exit(0)
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(reader.fiber)))
      assert.deepStrictEqual(yield* client.exit, { code: 0, signal: null })
    })
  )

  it.effect("stderr goes to the handler and only a bounded tail is kept", () =>
    Effect.gen(function* () {
      const child = yield* makeChild({ exitOnStdinEnd: true })
      const seen: Array<string> = []
      const client = yield* spawnClient(child, {
        stderrTailBytes: 8,
        stderr: (chunk) => Effect.sync(() => seen.push(new TextDecoder().decode(chunk)))
      })
      // Each write returns once the reading of stderr it woke has come to rest.
      yield* runIdle(child.stderr.write("0123456789"))
      yield* runIdle(child.stderr.write("abcdef"))
      // The last 8 bytes start inside "é": the half character is dropped, not shown as U+FFFD.
      yield* runIdle(child.stderr.write("é1234567"))
      assert.deepStrictEqual(seen, ["0123456789", "abcdef", "é1234567"])
      assert.strictEqual(yield* client.stderrTail, "1234567")
      yield* runIdle(child.stderr.write("xy"))
      assert.strictEqual(yield* client.stderrTail, "234567xy")
    })
  )
})
