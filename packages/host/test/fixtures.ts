/**
 * In-memory servers for the host's tests: a `Connector` that links each
 * configured name to a server built in the test's scope, over a memory pair
 * (JSON through the codec), and lets a test end a server's side of the
 * current connection as a crash would.
 */
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import * as McpTest from "@effect-mcp/testing/McpTest"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as ScopeModule from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Connector from "../src/Connector.ts"
import type * as McpHost from "../src/McpHost.ts"
import type * as ServerStatus from "../src/ServerStatus.ts"
import type * as McpConfig from "../src/McpConfig.ts"

export interface Memory {
  readonly connector: Layer.Layer<Connector.Connector>
  /** Connection attempts per server. */
  readonly attempts: Map<string, number>
  /** Ends the server side of a server's current connection (the client sees the connection close). */
  readonly crash: (name: string) => Effect.Effect<void>
  /** Drops everything the client sends on the server's current connection (a server that stopped answering). */
  readonly mute: (name: string) => void
  /** Refuses every attempt to connect to server `name` from now on (a server that went away). */
  readonly down: (name: string) => void
  /**
   * Waits until a client of server `name` has been handed a frame from the server (on any of its
   * connections) that satisfies `check`; re-checked on every frame, no polling.
   */
  readonly received: (name: string, check: (message: JsonRpc.Message) => boolean) => Effect.Effect<void>
  /** How many requests of `method` clients sent to server `name` so far (on any of its connections). */
  readonly sent: (name: string, method: string) => number
  /** Waits until clients sent server `name` at least `count` requests of `method`; re-checked on every frame. */
  readonly requested: (name: string, method: string, count: number) => Effect.Effect<void>
  /** From now on, requests of `method` reach the servers that much later (a Clock sleep: virtual under TestClock). */
  readonly slowDown: (method: string, delay: Duration.Input) => void
  /** Sends a notification to the client from server `name`'s current connection, as the server would. */
  readonly announce: (name: string, method: string) => Effect.Effect<void>
}

/**
 * Whether `message` acknowledges a 2026-07-28 `subscriptions/listen` for tools' `list_changed`: the server
 * sends it and registers the listener in one step, so a change made after it reaches the stream.
 */
export const listensForTools = (message: JsonRpc.Message): boolean =>
  "method" in message &&
  message.method === "notifications/subscriptions/acknowledged" &&
  (message.params as { readonly notifications?: { readonly toolsListChanged?: boolean } } | undefined)?.notifications
    ?.toolsListChanged === true

/**
 * A connector over in-memory servers; `failFirst` attempts of a server fail
 * to connect (a refused transport), as a server that is not up yet.
 * `closing` runs as each connection closes, after its ends are closed: a
 * close that takes a while, as stopping a process does (e.g. waiting on a
 * `Deferred` the test completes).
 */
export const memory = (
  servers: { readonly [name: string]: Layer.Layer<McpServer.McpServer> },
  options: {
    readonly failFirst?: { readonly [name: string]: number }
    readonly closing?: Effect.Effect<void>
  } = {}
): Effect.Effect<Memory, never, Scope.Scope> =>
  Effect.gen(function* () {
    const contexts = new Map<string, Context.Context<McpServer.McpServer>>()
    for (const [name, layer] of Object.entries(servers)) contexts.set(name, yield* Layer.build(layer))
    const attempts = new Map<string, number>()
    const downs = new Set<string>()
    const current = new Map<string, MemoryTransport.End>()
    const mutes = new Map<string, () => void>()
    // Every frame the clients were handed, by server; `changed` is completed (and replaced) on each.
    const frames: Array<{ readonly name: string; readonly message: JsonRpc.Message }> = []
    let changed = Deferred.makeUnsafe<void>()
    // Wakes whoever waits for a frame, either way.
    const signal = () => {
      const current = changed
      changed = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(current, Exit.void)
    }
    const requests: Array<{ readonly name: string; readonly method: string }> = []
    const slow = new Map<string, Duration.Input>()
    // Notes the requests of a frame; returns the method of the last.
    const record = (name: string, frame: Transport.Outgoing): string | undefined => {
      let method: string | undefined
      for (const message of JsonRpcCodec.isBatch(frame) ? frame : [frame]) {
        if (JsonRpc.isRequest(message as JsonRpc.Message)) {
          method = (message as JsonRpc.Request).method
          requests.push({ name, method })
        }
      }
      if (method !== undefined) signal()
      return method
    }
    const receive = (name: string, frame: Transport.Incoming) => {
      if (Result.isFailure(frame)) return
      for (const message of JsonRpcCodec.isBatch(frame.success) ? frame.success : [frame.success]) {
        frames.push({ name, message: message as JsonRpc.Message })
      }
      signal()
    }
    const received = (name: string, check: (message: JsonRpc.Message) => boolean): Effect.Effect<void> =>
      Effect.suspend(() =>
        frames.some((f) => f.name === name && check(f.message))
          ? Effect.void
          : Effect.andThen(Deferred.await(changed), received(name, check))
      )
    const sent = (name: string, method: string) => requests.filter((r) => r.name === name && r.method === method).length
    const connect: Connector.Connect = (name) =>
      Effect.gen(function* () {
        const attempt = (attempts.get(name) ?? 0) + 1
        attempts.set(name, attempt)
        if (attempt <= (options.failFirst?.[name] ?? 0) || downs.has(name)) {
          return yield* new Transport.TransportError({ reason: "Io", message: `connection refused (${attempt})` })
        }
        // Runs after the ends are closed (finalizers run in reverse).
        if (options.closing !== undefined) yield* Effect.addFinalizer(() => options.closing!)
        const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
        yield* McpServer.makeSession.pipe(
          Effect.provideService(Transport.Transport, serverEnd),
          Effect.provideContext(contexts.get(name)!)
        )
        current.set(name, serverEnd)
        let muted = false
        mutes.set(name, () => {
          muted = true
        })
        // A wrapper of the end's reading and sending (it has no push delivery, so the client reads `incoming`).
        const transport: Transport.TransportShape = {
          incoming: Stream.tap(clientEnd.incoming, (frame) => Effect.sync(() => receive(name, frame))),
          send: (frame, sendOptions) => {
            const method = record(name, frame)
            const go = muted ? Effect.void : clientEnd.send(frame, sendOptions)
            const delay = method === undefined ? undefined : slow.get(method)
            return delay === undefined ? go : Effect.andThen(Effect.sleep(delay), go)
          }
        }
        return { transport }
      })
    return {
      connector: Connector.layer(connect),
      attempts,
      crash: (name) => Effect.suspend(() => current.get(name)?.close ?? Effect.void),
      mute: (name) => mutes.get(name)?.(),
      down: (name) => {
        downs.add(name)
      },
      received,
      sent,
      requested: (name, method, count) => {
        const check: Effect.Effect<void> = Effect.suspend(() =>
          sent(name, method) >= count ? Effect.void : Effect.andThen(Deferred.await(changed), check)
        )
        return check
      },
      slowDown: (method, delay) => {
        slow.set(method, delay)
      },
      announce: (name, method) =>
        Effect.suspend(() => Effect.ignore(current.get(name)!.send({ jsonrpc: "2.0", method } as JsonRpc.Message)))
    }
  })

/** A server named `name` whose `echo` tool answers with the server's name and the text. */
export const echoServer = (name: string, ...more: ReadonlyArray<Tool.Tool<never>>) =>
  Tool.layer(
    Tool.make("echo", {
      description: "Echoes the text",
      input: Schema.Struct({ text: Schema.String }),
      handler: ({ text }) => Effect.succeed(`${name}: ${text}`)
    }),
    ...more
  ).pipe(Layer.provideMerge(McpServer.layer({ name, version: "1.0.0" })))

/** A decoded configuration naming `names` (the in-memory connector ignores the entries). */
/** `added`, the tool `adder`'s `add_tool` registers. */
export const added = Tool.make("added", { input: Schema.Struct({}), handler: () => Effect.succeed("new") })

/**
 * A tool `add_tool` that registers `added` in the server's own scope when
 * called and answers "added" (the list changes, the server says so).
 */
export const adder = Layer.effectDiscard(
  Effect.gen(function* () {
    const server = yield* McpServer.McpServer
    const scope = yield* Effect.scope
    yield* Tool.register(
      Tool.make("add_tool", {
        input: Schema.Struct({}),
        handler: () =>
          Tool.register(added).pipe(
            Effect.provideService(McpServer.McpServer, server),
            ScopeModule.provide(scope),
            Effect.as("added")
          )
      })
    )
  })
)

export const configOf = (...names: ReadonlyArray<string>): McpConfig.Config => ({
  mcpServers: Object.fromEntries(names.map((name) => [name, { command: name }]))
})

export const clientInfo = { name: "test-host", version: "1.0.0" }

/** The text of a tool result's first block. */
export const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const block = result.content[0] as { readonly type: string; readonly text?: string } | undefined
  return block?.type === "text" ? (block.text ?? "") : ""
}

/** A logger that keeps every message, for tests of what the host warns about. */
export const captureLogs = () => {
  const logs: Array<string> = []
  const capture = Logger.layer([
    Logger.make(({ message }) => {
      logs.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
    })
  ])
  return { logs, capture }
}

/**
 * Records every status change of the host from now on; `until` waits for the
 * record to satisfy `check` (re-checked on every change, no polling).
 */
export const record = (host: McpHost.McpHostShape) =>
  Effect.gen(function* () {
    const seen: Array<ServerStatus.StatusChange> = []
    let changed = Deferred.makeUnsafe<void>()
    const until = (check: (seen: ReadonlyArray<ServerStatus.StatusChange>) => boolean): Effect.Effect<void> =>
      Effect.suspend(() => (check(seen) ? Effect.void : Effect.andThen(Deferred.await(changed), until(check))))
    // Returns once the recorder has come to rest, subscribed.
    yield* McpTest.forkIdle(
      host.statusChanges.pipe(
        Stream.runForEach((change) =>
          Effect.sync(() => {
            seen.push(change)
            const current = changed
            changed = Deferred.makeUnsafe<void>()
            Deferred.doneUnsafe(current, Exit.void)
          })
        )
      )
    )
    return Object.assign(seen, { until })
  })

/** A status in a line: `Degraded(<retryIn ms>)` or `Degraded(connected)`, `Connecting(<attempt>)`, or the tag. */
export const describeStatus = (s: ServerStatus.ServerStatus): string =>
  s._tag === "Degraded"
    ? `Degraded(${s.retryIn === undefined ? "connected" : Duration.toMillis(s.retryIn)})`
    : s._tag === "Connecting"
      ? `Connecting(${s.attempt})`
      : s._tag
