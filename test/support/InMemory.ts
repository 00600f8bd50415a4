/**
 * The everything server and a raw engine client linked in memory, for tests
 * that drive time with the TestClock. The server keeps what its handlers
 * write to the console (the `started` / `cancelled` lines of `test_long_running`).
 */
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as EverythingServer from "@effect-mcp/everything-server/EverythingServer"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeChanges } from "./ServerProcess.ts"

/** JSON results read by path in assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests read JSON results by path; the assertions are the type check
export type Json = any

export interface Notice {
  readonly method: string
  readonly params: Json
}

export interface Connected {
  readonly client: Session.SessionShape
  readonly request: (method: string, params?: object) => Effect.Effect<Json, unknown>
  /** Notifications the client received, in order. */
  readonly notifications: Array<Notice>
  /** Lines the server wrote with `Console.error`. */
  readonly stderr: Array<string>
  /**
   * Waits until `done()` holds, looking again after each notification the client receives and each line the
   * server writes: what a test waits on instead of letting fibers run for a while.
   */
  readonly until: (done: () => boolean) => Effect.Effect<void>
}

export interface Options {
  readonly version: ProtocolVersion.ProtocolVersion
  readonly capabilities?: Session.Capabilities
  readonly handlers?: ReadonlyMap<string, Session.Handler>
}

const listened = [
  "notifications/message",
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated"
]

/** The everything server (its own instance) and a client speaking `options.version`, until the scope closes. */
export const connect = (options: Options) =>
  Effect.gen(function* () {
    const stderr: Array<string> = []
    const changes = makeChanges()
    const console: Console.Console = {
      ...globalThis.console,
      error: (...args: ReadonlyArray<unknown>) => {
        stderr.push(args.map(String).join(" "))
        changes.notify()
      }
    }
    const context = yield* Layer.build(
      EverythingServer.layer().pipe(Layer.provide(Layer.succeed(Console.Console, console)))
    )
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    const notifications: Array<Notice> = []
    const client = yield* ClientSession.make({
      clientInfo: { name: "in-memory-client", version: "1.0.0" },
      capabilities: options.capabilities ?? {},
      supportedVersions: [options.version],
      ...(options.handlers === undefined ? {} : { handlers: options.handlers }),
      notificationHandlers: new Map(
        listened.map((method): [string, Session.NotificationHandler] => [
          method,
          (params) =>
            Effect.sync(() => {
              notifications.push({ method, params })
              changes.notify()
            })
        ])
      )
    }).pipe(Effect.provideService(Transport.Transport, clientEnd), Effect.orDie)
    return {
      client,
      request: (method: string, params?: object): Effect.Effect<Json, unknown> => client.request(method, params ?? {}),
      notifications,
      stderr,
      until: (done) =>
        Effect.callback<void>((resume) => {
          if (done()) return resume(Effect.void)
          const unsubscribe = changes.subscribe(() => {
            if (!done()) return
            unsubscribe()
            resume(Effect.void)
          })
          return Effect.sync(unsubscribe)
        })
    } satisfies Connected
  })
