import { assert, describe, it } from "@effect/vitest"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as StdioTransport from "@effect-mcp/engine/StdioTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import { fileURLToPath } from "node:url"

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const echoServer = fixture("echo-server.ts")
const mcpServer = fixture("mcp-server.ts")

// Short graces keep the shutdown tests fast; each step still has to happen in order.
const shutdown = { exitGrace: "300 millis", termGrace: "300 millis", killGrace: "2 seconds" } as const
const TIMEOUT = 10_000

/** Text waited for on each client's stderr, checked as every chunk arrives. */
const stderrWaiters = new WeakMap<StdioTransport.StdioClient, (text: string) => Effect.Effect<void>>()

/**
 * Spawns a client whose stderr chunks (also passed to a handler in `options`)
 * are watched, so `awaitStderr` wakes on the chunk that completes the text.
 */
const spawnWatched = (options: StdioTransport.ClientOptions) =>
  Effect.gen(function* () {
    const decoder = new TextDecoder()
    let seen = ""
    let waiters: Array<{ readonly text: string; readonly done: Deferred.Deferred<void> }> = []
    const forward = typeof options.stderr === "function" ? options.stderr : undefined
    const client = yield* NodeStdio.makeClient({
      ...options,
      stderr: (chunk) =>
        Effect.andThen(
          Effect.sync(() => {
            seen += decoder.decode(chunk, { stream: true })
            const found = waiters.filter((waiter) => seen.includes(waiter.text))
            waiters = waiters.filter((waiter) => !seen.includes(waiter.text))
            for (const waiter of found) Deferred.doneUnsafe(waiter.done, Exit.void)
          }),
          forward === undefined ? Effect.void : forward(chunk)
        )
    })
    stderrWaiters.set(client, (text) =>
      Effect.suspend(() => {
        if (seen.includes(text)) return Effect.void
        const done = Deferred.makeUnsafe<void>()
        waiters.push({ text, done })
        return Deferred.await(done)
      })
    )
    return client
  })

const spawnEcho = (flags: ReadonlyArray<string> = [], options: Partial<StdioTransport.ClientOptions> = {}) =>
  spawnWatched({ command: process.execPath, args: [echoServer, ...flags], shutdown, ...options })

/** Reads a client's incoming frames into a queue; the fiber's exit tells how incoming ended. */
const reader = (client: StdioTransport.StdioClient) =>
  Effect.gen(function* () {
    const inbox = yield* Queue.unbounded<JsonRpc.Message>()
    const fiber = yield* client.incoming.pipe(
      Stream.runForEach((frame) =>
        Result.isSuccess(frame) ? Queue.offer(inbox, frame.success as JsonRpc.Message) : Effect.void
      ),
      Effect.forkScoped
    )
    return { next: Queue.take(inbox), fiber }
  })

/** Waits until the child (spawned by `spawnWatched`) has written `text` to stderr. */
const awaitStderr = (client: StdioTransport.StdioClient, text: string) => stderrWaiters.get(client)!(text)

describe("NodeStdio client over real child processes", () => {
  it.live(
    "round trip with a child server",
    () =>
      Effect.gen(function* () {
        const client = yield* spawnEcho()
        const { next } = yield* reader(client)
        yield* client.send(JsonRpc.request(1, "echo", { hello: "world" }))
        yield* client.send(JsonRpc.notification("note", { n: 1 }))
        assert.deepStrictEqual(yield* next, JsonRpc.success(1, { hello: "world" }))
        assert.deepStrictEqual(yield* next, JsonRpc.notification("note", { n: 1 }))
        assert.isAbove(client.pid, 0)
      }),
    TIMEOUT
  )

  it.live(
    "a 10 MiB frame crosses each way",
    () =>
      Effect.gen(function* () {
        const client = yield* spawnEcho()
        const { next } = yield* reader(client)
        const data = 'é😀"\\x'.repeat((10 * 1024 * 1024) / 8)
        yield* client.send(JsonRpc.request(1, "echo", { data }))
        const response = (yield* next) as JsonRpc.SuccessResponse
        assert.strictEqual(response.id, 1)
        assert.isTrue((response.result as { data: string }).data === data, "the 10 MiB string came back intact")
      }),
    TIMEOUT
  )

  it.live(
    "stderr is captured as a tail and handed to the handler",
    () =>
      Effect.gen(function* () {
        const forwarded: Array<string> = []
        const client = yield* spawnEcho([], {
          stderr: (chunk) => Effect.sync(() => forwarded.push(new TextDecoder().decode(chunk)))
        })
        const { next } = yield* reader(client)
        yield* client.send(JsonRpc.request(1, "stderr", { text: "a log line\n" }))
        yield* next
        yield* awaitStderr(client, "a log line\n")
        assert.strictEqual(yield* client.stderrTail, "ready\na log line\n")
        assert.strictEqual(forwarded.join(""), "ready\na log line\n")
      }),
    TIMEOUT
  )

  it.live(
    "a child exiting mid-session fails incoming with ServerExited carrying the exit code and stderr tail",
    () =>
      Effect.gen(function* () {
        const client = yield* spawnEcho()
        const { next, fiber } = yield* reader(client)
        yield* client.send(JsonRpc.request(1, "echo", {}))
        yield* next
        yield* client.send(JsonRpc.request(2, "exit", { code: 3, stderr: "fatal: the end\n" }))
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        const failure = error?._tag === "Fail" ? error.error : undefined
        assert.instanceOf(failure, Transport.TransportError)
        assert.strictEqual(failure?.reason, "Closed")
        const exited = StdioTransport.serverExited(failure)
        assert.strictEqual(exited?.exitCode, 3)
        assert.strictEqual(exited?.signal, null)
        assert.strictEqual(exited?.stderrTail, "ready\nfatal: the end\n")
        const late = yield* Effect.flip(client.send(JsonRpc.notification("late")))
        assert.strictEqual(late.reason, "Closed")
      }),
    TIMEOUT
  )

  it.live(
    "shutdown of a cooperative child: stdin closed, it exits 0, no signal sent",
    () =>
      Effect.gen(function* () {
        // The exit grace bounds the wait for the child's own exit (see the full session below), it delays nothing.
        const client = yield* spawnEcho([], { shutdown: { ...shutdown, exitGrace: "8 seconds" } })
        yield* awaitStderr(client, "ready\n")
        yield* client.close
        assert.deepStrictEqual(yield* client.exit, { code: 0, signal: null })
        assert.strictEqual(yield* client.stderrTail, "ready\nstdin closed\n")
      }),
    TIMEOUT
  )

  it.live(
    "shutdown of a child that ignores end of stdin: SIGTERM after the grace period",
    () =>
      Effect.gen(function* () {
        const client = yield* spawnEcho(["--ignore-eof"])
        yield* awaitStderr(client, "ready\n")
        yield* client.close
        assert.deepStrictEqual(yield* client.exit, { code: null, signal: "SIGTERM" })
        assert.strictEqual(yield* client.stderrTail, "ready\nstdin closed\n")
      }),
    TIMEOUT
  )

  it.live(
    "shutdown of a child that ignores SIGTERM too: stdin closed, SIGTERM, then SIGKILL",
    () =>
      Effect.gen(function* () {
        const client = yield* spawnEcho(["--ignore-eof", "--ignore-sigterm"])
        yield* awaitStderr(client, "ready\n")
        yield* client.close
        assert.deepStrictEqual(yield* client.exit, { code: null, signal: "SIGKILL" })
        yield* awaitStderr(client, "got SIGTERM\n")
        assert.strictEqual(yield* client.stderrTail, "ready\nstdin closed\ngot SIGTERM\n")
      }),
    TIMEOUT
  )

  it.live(
    "closing the scope shuts the child down (the finalizer runs the same sequence)",
    () =>
      Effect.gen(function* () {
        // Closed only once the child says it is ready: before that it has not installed its SIGTERM
        // handler yet, and a loaded machine would let SIGTERM end it first.
        const client = yield* Effect.gen(function* () {
          const client = yield* spawnEcho(["--ignore-eof", "--ignore-sigterm"])
          yield* awaitStderr(client, "ready\n")
          return client
        }).pipe(Effect.scoped)
        assert.deepStrictEqual(yield* client.exit, { code: null, signal: "SIGKILL" })
      }),
    TIMEOUT
  )

  it.live(
    "the child gets the env and cwd asked for: variables on top of ours (undefined removes one), or only its own",
    () =>
      Effect.gen(function* () {
        // Reports what it sees, then lives until its stdin ends.
        const script = [
          "const env = process.env",
          "const params = { cwd: process.cwd(), a: env.EFFECT_MCP_A ?? null, path: env.PATH ?? null, home: env.HOME ?? null }",
          'process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "env", params }) + "\\n")',
          "process.stdin.resume()"
        ].join("\n")
        const seen = (options: Partial<StdioTransport.ClientOptions>) =>
          Effect.gen(function* () {
            const client = yield* NodeStdio.makeClient({
              command: process.execPath,
              args: ["-e", script],
              shutdown,
              ...options
            })
            const { next } = yield* reader(client)
            return ((yield* next) as JsonRpc.Notification).params
          }).pipe(Effect.scoped)
        const dir = fs.realpathSync(os.tmpdir())
        assert.deepStrictEqual(yield* seen({ env: { EFFECT_MCP_A: "1", HOME: undefined }, cwd: dir }), {
          cwd: dir,
          a: "1",
          path: process.env.PATH ?? null,
          home: null
        })
        assert.deepStrictEqual(yield* seen({ env: { EFFECT_MCP_A: "2" }, inheritEnv: false }), {
          cwd: process.cwd(),
          a: "2",
          path: null,
          home: null
        })
      }),
    TIMEOUT
  )

  it.live(
    "a command that cannot be spawned fails with reason Io",
    () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(NodeStdio.makeClient({ command: "/nonexistent/effect-mcp-server" }))
        assert.strictEqual(error.reason, "Io")
      }),
    TIMEOUT
  )
})

describe("a full MCP session across processes", () => {
  const clientOptions = { clientInfo: { name: "test-client", version: "1.0.0" }, capabilities: {} }

  for (const version of ["2025-11-25", "2026-07-28"] as const) {
    it.live(
      `ClientSession over the stdio client, ServerSession in a child over the stdio server (${version})`,
      () =>
        Effect.gen(function* () {
          // The child entry is a .ts file: Node 24 strips its types, and the workspace packages it
          // imports resolve to their src/*.ts through the package exports. It must exit on its own: the
          // exit grace is only how long `close` waits for that (a loaded machine may take more than the
          // short graces of the escalation tests), not a delay of the test.
          const transport = yield* spawnWatched({
            command: process.execPath,
            args: [mcpServer],
            shutdown: { ...shutdown, exitGrace: "8 seconds" }
          })
          const client = yield* ClientSession.make({ ...clientOptions, supportedVersions: [version] }).pipe(
            Effect.provideService(Transport.Transport, transport)
          )
          assert.strictEqual(client.state.revision?.version, version)
          assert.deepStrictEqual(client.state.peerInfo, { name: "fixture-mcp-server", version: "1.0.0" })
          const result = (yield* client.request("tools/call", { name: "echo", arguments: { n: 42 } })) as {
            content: ReadonlyArray<{ text: string }>
          }
          assert.deepStrictEqual(JSON.parse(result.content[0]!.text), { n: 42 })
          // The server logged through effect's logger: to stderr. Had anything but protocol
          // messages reached stdout, the client would have seen decode failures instead.
          yield* awaitStderr(transport, "echo called with")
          yield* transport.close
          // End of stdin ended the server's session cleanly and the process exited on its own.
          assert.deepStrictEqual(yield* transport.exit, { code: 0, signal: null })
          assert.include(yield* transport.stderrTail, "session closed: Success")
          assert.isTrue(Exit.isSuccess(yield* client.closed))
        }),
      TIMEOUT
    )
  }

  it.live(
    "console output of a stdio server goes to stderr, never into the protocol stream",
    () =>
      Effect.gen(function* () {
        const transport = yield* spawnWatched({ command: process.execPath, args: [mcpServer], shutdown })
        const client = yield* ClientSession.make(clientOptions).pipe(
          Effect.provideService(Transport.Transport, transport)
        )
        const printed = (yield* client.request("tools/call", { name: "console", arguments: {} })) as {
          content: ReadonlyArray<{ text: string }>
        }
        assert.strictEqual(printed.content[0]!.text, "printed")
        yield* awaitStderr(transport, "console.log noise")
        yield* awaitStderr(transport, "console.info noise")
        const echoed = (yield* client.request("tools/call", { name: "echo", arguments: { n: 1 } })) as {
          content: ReadonlyArray<{ text: string }>
        }
        assert.deepStrictEqual(JSON.parse(echoed.content[0]!.text), { n: 1 })
      }),
    TIMEOUT
  )

  it.live(
    "a server process that crashes closes the client session with ServerExited",
    () =>
      Effect.gen(function* () {
        const transport = yield* spawnWatched({ command: process.execPath, args: [mcpServer], shutdown })
        const client = yield* ClientSession.make(clientOptions).pipe(
          Effect.provideService(Transport.Transport, transport)
        )
        const error = yield* Effect.flip(client.request("tools/call", { name: "crash", arguments: {} }))
        assert.strictEqual(error._tag, "SessionClosed")
        const closed = yield* client.closed
        const failure = Exit.isFailure(closed) ? closed.cause.reasons[0] : undefined
        const exited = StdioTransport.serverExited(failure?._tag === "Fail" ? failure.error : undefined)
        assert.strictEqual(exited?.exitCode, 7)
        assert.include(exited?.stderrTail ?? "", "crashing on purpose")
      }),
    TIMEOUT
  )

  it.live(
    "layerClient provides the Transport for ClientSession.layer",
    () =>
      Effect.gen(function* () {
        const result = yield* Effect.gen(function* () {
          const session = yield* ClientSession.make(clientOptions)
          return yield* session.request("tools/call", { name: "echo", arguments: { via: "layer" } })
        }).pipe(
          Effect.provide(NodeStdio.layerClient({ command: process.execPath, args: [mcpServer], shutdown })),
          Effect.scoped
        )
        const text = (result as { content: ReadonlyArray<{ text: string }> }).content[0]!.text
        assert.deepStrictEqual(JSON.parse(text), { via: "layer" })
      }),
    TIMEOUT
  )
})
