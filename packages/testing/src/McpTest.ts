/**
 * An McpServer and an McpClient connected in memory, for tests. Every frame
 * crosses as JSON text through the real codec (`codec: false` hands the
 * objects over instead), the client speaks the revision you choose, and
 * nothing touches a socket or a timer of its own: inside `it.effect` the
 * TestClock drives every timeout, delay and keepalive.
 *
 * - `layer(server, options)` provides an `McpClient` (and the `McpServer`) to
 *   a test or to `it.layer`.
 * - `connect(server, options)` builds both in the current scope and returns
 *   them; `makeClient(options)` adds another client to the server in context.
 * - `connectRaw` / `makeRawClient` give the engine's raw client session
 *   instead, for tests that assert the exact JSON a server answers.
 * - `makeClientFor(session, options)` connects a client to any server
 *   session factory (e.g. a scripted `ServerSession`).
 *
 * @example
 * ```ts
 * import { assert, it } from "@effect/vitest"
 * import { McpClient } from "@effect-mcp/client"
 * import { McpServer, Tool } from "@effect-mcp/server"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect, Layer, Schema } from "effect"
 *
 * const Echo = Tool.make("echo", {
 *   input: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed({ content: [{ type: "text", text }] })
 * })
 * const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0" })))
 *
 * it.effect("echoes", () =>
 *   Effect.gen(function* () {
 *     const client = yield* McpClient.McpClient
 *     const result = yield* client.callTool("echo", { text: "hi" })
 *     assert.deepStrictEqual(result.content, [{ type: "text", text: "hi" }])
 *   }).pipe(Effect.provide(McpTest.layer(Server, { revision: "2025-06-18" })))
 * )
 * ```
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as Features from "@effect-mcp/protocol/Features"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { TestClock } from "effect/testing"

/** The client's name in the handshake unless `clientInfo` says otherwise. */
export const testClientInfo: Session.Implementation = { name: "effect-mcp-test-client", version: "0.0.0" }

/** What both kinds of client share: revision, codec, and a hook on the client's end of the connection. */
export interface CommonOptions {
  /** The revision the client speaks, or several (the newest the server accepts wins). Default: all. */
  readonly revision?: ProtocolVersion.ProtocolVersion | ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined
  /** Default `testClientInfo`. */
  readonly clientInfo?: Session.Implementation | undefined
  /** Every frame crosses as JSON text (the full codec path). Default true. */
  readonly codec?: boolean | undefined
  /**
   * Wraps the client's end of the connection before the client uses it,
   * e.g. with `FaultTransport.make` or a recorder of the frames it sends.
   */
  readonly clientTransport?:
    | ((end: MemoryTransport.End) => Effect.Effect<Transport.TransportShape, never, Scope.Scope>)
    | undefined
}

/** Options of an `McpClient` under test. */
export interface Options<HA = never, HE = never, HR = never> extends CommonOptions {
  /**
   * The client's handler Layers (`SamplingHandler.layer`, `ElicitationHandler.layer`,
   * `RootsHandler.layer`, merged): they decide what it declares and answers.
   */
  readonly clientHandlers?: Layer.Layer<HA, HE, HR> | undefined
  /** Further client options (capabilities, peer timeouts, page limits, ...). */
  readonly client?: Partial<Omit<McpClient.Options, "clientInfo" | "supportedVersions">> | undefined
}

/** A server and a client connected to it. */
export interface Connection {
  readonly client: McpClient.McpClientShape
  readonly server: McpServer.McpServerShape
  /** The server's services, e.g. to add a client with `makeClient(...).pipe(Effect.provideContext(context))`. */
  readonly context: Context.Context<McpServer.McpServer>
}

const versionsOf = (revision: CommonOptions["revision"]): ReadonlyArray<ProtocolVersion.ProtocolVersion> | undefined =>
  revision === undefined ? undefined : typeof revision === "string" ? [revision] : revision

/** A memory pair whose server end is served by `session`; returns the client's end. */
const link = <E, R>(session: Effect.Effect<unknown, E, R>, options: CommonOptions | undefined) =>
  Effect.gen(function* () {
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: options?.codec ?? true })
    yield* session.pipe(Effect.provideService(Transport.Transport, serverEnd))
    return options?.clientTransport === undefined ? clientEnd : yield* options.clientTransport(clientEnd)
  })

/**
 * An McpClient connected to whatever server session `session` starts over
 * the `Transport` it is given (McpServer's `makeSession`, or
 * `ServerSession.make(...)` with handlers of your own). Lives until the scope closes.
 *
 * @example
 * ```ts
 * import { ServerSession } from "@effect-mcp/engine"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect } from "effect"
 *
 * const scripted = ServerSession.make({
 *   serverInfo: { name: "scripted", version: "1.0.0" },
 *   capabilities: { tools: {} },
 *   handlers: new Map([["tools/list", () => Effect.succeed({ tools: [] })]])
 * })
 * const program = Effect.gen(function* () {
 *   const client = yield* McpTest.makeClientFor(scripted, { revision: "2025-11-25" })
 *   return yield* client.listTools()
 * })
 * ```
 */
export const makeClientFor = <E, R, HA = never, HE = never, HR = never>(
  session: Effect.Effect<unknown, E, R>,
  options?: Options<HA, HE, HR>
): Effect.Effect<
  McpClient.McpClientShape,
  E | HE | ClientSession.InitializeError,
  Exclude<R, Transport.Transport> | HR | Scope.Scope
> =>
  Effect.gen(function* () {
    const end = yield* link(session, options)
    const handlers =
      options?.clientHandlers === undefined ? Context.empty() : yield* Layer.build(options.clientHandlers)
    const supportedVersions = versionsOf(options?.revision)
    return yield* McpClient.make({
      ...options?.client,
      clientInfo: options?.clientInfo ?? testClientInfo,
      ...(supportedVersions === undefined ? {} : { supportedVersions })
    }).pipe(Effect.provideService(Transport.Transport, end), Effect.provideContext(handlers as Context.Context<never>))
  })

/**
 * Another client of the McpServer in context, on a session of its own.
 *
 * @example
 * ```ts
 * import { McpServer } from "@effect-mcp/server"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect } from "effect"
 *
 * const Server = McpServer.layer({ name: "shared", version: "1.0.0" })
 * const program = Effect.gen(function* () {
 *   const { client, context } = yield* McpTest.connect(Server)
 *   const second = yield* McpTest.makeClient({ revision: "2024-11-05" }).pipe(Effect.provideContext(context))
 *   return [client.revision, second.revision]
 * })
 * ```
 */
export const makeClient = <HA = never, HE = never, HR = never>(
  options?: Options<HA, HE, HR>
): Effect.Effect<
  McpClient.McpClientShape,
  HE | ClientSession.InitializeError,
  McpServer.McpServer | HR | Scope.Scope
> => makeClientFor(McpServer.makeSession, options)

/**
 * Builds the server Layer in the current scope and connects a client to it.
 *
 * @example
 * ```ts
 * import { McpServer } from "@effect-mcp/server"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const { client } = yield* McpTest.connect(McpServer.layer({ name: "s", version: "1.0.0" }), {
 *     revision: "2026-07-28"
 *   })
 *   return client.serverInfo
 * })
 * ```
 */
export const connect = <E, R, HA = never, HE = never, HR = never>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options?: Options<HA, HE, HR>
): Effect.Effect<Connection, E | HE | ClientSession.InitializeError, R | HR | Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(server)
    const client = yield* makeClient(options).pipe(Effect.provideContext(context))
    return { client, server: Context.get(context, McpServer.McpServer), context }
  })

/**
 * The client (and the server) as services, for `Effect.provide` or `it.layer`.
 *
 * @example
 * ```ts
 * import { it } from "@effect/vitest"
 * import { McpClient } from "@effect-mcp/client"
 * import { McpServer } from "@effect-mcp/server"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect } from "effect"
 *
 * it.layer(McpTest.layer(McpServer.layer({ name: "s", version: "1.0.0" })))("a server", (it) => {
 *   it.effect("answers ping", () => Effect.flatMap(McpClient.McpClient, (client) => client.ping()))
 * })
 * ```
 */
export const layer = <E, R, HA = never, HE = never, HR = never>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options?: Options<HA, HE, HR>
): Layer.Layer<McpClient.McpClient | McpServer.McpServer, E | HE | ClientSession.InitializeError, R | HR> =>
  Layer.effect(McpClient.McpClient, makeClient(options)).pipe(Layer.provideMerge(server))

/** A notification the raw client received. */
export interface Notice {
  readonly method: string
  readonly params: unknown
}

/** Options of a raw engine client. */
export interface RawOptions extends CommonOptions {
  /** What the client declares. Default none. */
  readonly capabilities?: Session.Capabilities | undefined
  /** How it answers the server's requests (`sampling/createMessage`, `roots/list`, ...). */
  readonly handlers?: ReadonlyMap<string, Session.Handler> | undefined
  /** Notifications recorded in `notifications`. Default: logging, list changes, resource updates, acknowledgements. */
  readonly notifications?: ReadonlyArray<string> | undefined
}

/** The engine's client session, for wire-level assertions on what a server answers. */
export interface RawClient {
  readonly session: Session.SessionShape
  /** The server it is connected to. */
  readonly server: McpServer.McpServerShape
  /** A request whose result is the JSON the server answered (`{}` params by default). */
  readonly request: (method: string, params?: object) => Effect.Effect<unknown, unknown>
  /** Notifications received, in order. */
  readonly notifications: Queue.Queue<Notice>
  /**
   * Takes the notifications received so far, after a ping round trip: every
   * notification the server sent before answering the ping is included.
   */
  readonly drain: Effect.Effect<ReadonlyArray<Notice>>
}

const recorded = [
  "notifications/message",
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
  "notifications/resources/updated",
  "notifications/subscriptions/acknowledged",
  "notifications/elicitation/complete"
]

/**
 * A raw engine client of the McpServer in context, on a session of its own.
 *
 * @example
 * ```ts
 * import { McpServer } from "@effect-mcp/server"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const { context } = yield* McpTest.connectRaw(McpServer.layer({ name: "s", version: "1.0.0" }))
 *   const other = yield* McpTest.makeRawClient({ revision: "2025-03-26" }).pipe(Effect.provideContext(context))
 *   return yield* other.request("ping")
 * })
 * ```
 */
export const makeRawClient = (
  options?: RawOptions
): Effect.Effect<RawClient, ClientSession.InitializeError, McpServer.McpServer | Scope.Scope> =>
  Effect.gen(function* () {
    const end = yield* link(McpServer.makeSession, options)
    const notifications = yield* Queue.unbounded<Notice>()
    const record =
      (method: string): Session.NotificationHandler =>
      (params) =>
        Effect.asVoid(Queue.offer(notifications, { method, params }))
    const supportedVersions = versionsOf(options?.revision)
    const session = yield* ClientSession.make({
      clientInfo: options?.clientInfo ?? testClientInfo,
      capabilities: options?.capabilities ?? {},
      ...(supportedVersions === undefined ? {} : { supportedVersions }),
      ...(options?.handlers === undefined ? {} : { handlers: options.handlers }),
      notificationHandlers: new Map((options?.notifications ?? recorded).map((m) => [m, record(m)]))
    }).pipe(Effect.provideService(Transport.Transport, end))
    // A ping round trip is the barrier: the server answers after the notifications it
    // sent before reading the ping, they cross the link in order, and the session
    // hands each to its handler before it reads the next frame.
    // (`server/discover` on revisions without `ping`; an error answer is a round trip as well.)
    const barrier = Effect.suspend(() => {
      const version = session.state.revision?.version
      return Effect.ignore(
        session.request(version !== undefined && Features.has(version, "discover") ? "server/discover" : "ping", {})
      )
    })
    const drain = Effect.andThen(barrier, Queue.clear(notifications))
    return {
      session,
      server: yield* McpServer.McpServer,
      request: (method: string, params?: object) => session.request(method, params ?? {}),
      notifications,
      drain
    } satisfies RawClient
  })

/** A server and a raw client connected to it. */
export interface RawConnection extends RawClient {
  readonly context: Context.Context<McpServer.McpServer>
}

/**
 * Builds the server Layer in the current scope and connects a raw engine client to it.
 *
 * @example
 * ```ts
 * import { McpServer } from "@effect-mcp/server"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const raw = yield* McpTest.connectRaw(McpServer.layer({ name: "s", version: "1.0.0" }), {
 *     revision: "2025-11-25"
 *   })
 *   return yield* raw.request("tools/list")
 * })
 * ```
 */
export const connectRaw = <E, R>(
  server: Layer.Layer<McpServer.McpServer, E, R>,
  options?: RawOptions
): Effect.Effect<RawConnection, E | ClientSession.InitializeError, R | Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(server)
    const raw = yield* makeRawClient(options).pipe(Effect.provideContext(context))
    return { ...raw, context }
  })

/**
 * Moves the TestClock forward by `step` until `fiber` is done (at most
 * `maxSteps` times), then joins it: for a call whose timers you do not want
 * to count out by hand. When the fiber is still running after `maxSteps`
 * steps, this fails the test (a defect saying how far the clock moved)
 * rather than waiting for a clock that nothing moves any more; the fiber is
 * left to its parent's scope.
 *
 * @example
 * ```ts
 * import { McpClient } from "@effect-mcp/client"
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect } from "effect"
 *
 * const slowCall = Effect.gen(function* () {
 *   const client = yield* McpClient.McpClient
 *   const fiber = yield* Effect.forkChild(client.callTool("slow", {}))
 *   return yield* McpTest.advanceUntilDone(fiber, "1 second")
 * })
 * ```
 */
export const advanceUntilDone = <A, E>(
  fiber: Fiber.Fiber<A, E>,
  step: Duration.Input,
  maxSteps = 1000
): Effect.Effect<A, E> =>
  Effect.gen(function* () {
    for (let i = 0; i < maxSteps && fiber.pollUnsafe() === undefined; i++) yield* TestClock.adjust(step)
    if (fiber.pollUnsafe() === undefined) {
      return yield* Effect.die(
        new Error(
          `advanceUntilDone: the fiber was not done after ${maxSteps} steps of ${Duration.format(Duration.fromInputUnsafe(step))}`
        )
      )
    }
    return yield* Fiber.join(fiber)
  })

/**
 * Forks `effect` and returns its fiber once the work it set going has come to
 * rest: it, and every fiber it resumed or forked, has suspended or finished.
 * The fiber starts on a TestClock wake (the clock moves 1 millisecond), and
 * `TestClock.adjust` returns only then: a signal from the clock, not a count
 * of scheduler turns. Work resumed by I/O or a microtask is not waited for.
 * Needs the TestClock (`it.effect`).
 *
 * @example
 * ```ts
 * import { McpTest } from "@effect-mcp/testing"
 * import { Effect, Queue } from "effect"
 *
 * // A sender on a full queue: once at rest, it is waiting for room.
 * export const blocked = Effect.gen(function* () {
 *   const queue = yield* Queue.bounded<number>(1)
 *   yield* Queue.offer(queue, 1)
 *   const sender = yield* McpTest.forkIdle(Queue.offer(queue, 2))
 *   return sender.pollUnsafe() === undefined
 * })
 * ```
 */
export const forkIdle = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Fiber.Fiber<A, E>, never, R> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Effect.andThen(Effect.sleep(1), effect))
    yield* TestClock.adjust(1)
    return fiber
  })

/**
 * Runs `effect` and returns its result once all it set going has come to rest
 * (see `forkIdle`).
 *
 * @example
 * ```ts
 * import { McpTest } from "@effect-mcp/testing"
 * import { Deferred, Effect } from "effect"
 *
 * // Completing the Deferred wakes its waiter; runIdle returns once that has run.
 * export const released = Effect.gen(function* () {
 *   const release = yield* Deferred.make<void>()
 *   const waiter = yield* Effect.forkChild(Deferred.await(release))
 *   yield* McpTest.runIdle(Deferred.succeed(release, undefined))
 *   return waiter.pollUnsafe() !== undefined
 * })
 * ```
 */
export const runIdle = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(forkIdle(effect), Fiber.join)
