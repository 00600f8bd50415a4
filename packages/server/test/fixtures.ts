import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as ClientSession from "@effect-mcp/engine/ClientSession"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"

/** A JSON result read by path in assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests read JSON results by path; the assertions are the type check
export type Obj = { readonly [key: string]: any }

export const clientInfo = { name: "test-client", version: "1.0.0" }

/** Every revision, oldest first. */
export const revisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = [
  "2024-11-05",
  "2025-03-26",
  "2025-06-18",
  "2025-11-25",
  "2026-07-28"
]

/** Builds a server from `features` (plus McpServer.layer) and returns it with its context. */
export const buildServer = (
  features: Layer.Layer<never, never, McpServer.McpServer>,
  options: Partial<McpServer.Options> = {}
) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      Layer.provideMerge(features, McpServer.layer({ name: "test-server", version: "1.0.0", ...options }))
    )
    return { context, server: Context.get(context, McpServer.McpServer) }
  })

export interface Connected {
  readonly context: Context.Context<McpServer.McpServer>
  readonly server: McpServer.McpServerShape
  readonly client: Session.SessionShape
  /** Notifications the client received, in order. */
  readonly notifications: Queue.Queue<{ readonly method: string; readonly params: unknown }>
  readonly request: (method: string, params?: object) => Effect.Effect<unknown, unknown>
}

export interface ClientOptions {
  readonly version: ProtocolVersion.ProtocolVersion
  readonly capabilities?: Session.Capabilities
  readonly handlers?: ReadonlyMap<string, Session.Handler>
  readonly codec?: boolean
}

/** A server built from `features` and a raw engine client speaking `version`, linked in memory. */
export const connect = (
  options: ClientOptions & {
    readonly features: Layer.Layer<never, never, McpServer.McpServer>
    readonly server?: Partial<McpServer.Options>
  }
) => Effect.flatMap(buildServer(options.features, options.server), ({ context }) => attach(context, options))

/** Another session of an existing server, with its own raw client. */
export const attach = (context: Context.Context<McpServer.McpServer>, options: ClientOptions) =>
  Effect.gen(function* () {
    const server = Context.get(context, McpServer.McpServer)
    const [serverEnd, clientEnd] = yield* MemoryTransport.makePair({ codec: options.codec ?? true })
    yield* McpServer.makeSession.pipe(
      Effect.provideService(Transport.Transport, serverEnd),
      Effect.provideContext(context)
    )
    const notifications = yield* Queue.unbounded<{ readonly method: string; readonly params: unknown }>()
    const record =
      (method: string): Session.NotificationHandler =>
      (params) =>
        Queue.offer(notifications, { method, params }).pipe(Effect.asVoid)
    const methods = [
      "notifications/message",
      "notifications/tools/list_changed",
      "notifications/resources/list_changed",
      "notifications/prompts/list_changed",
      "notifications/resources/updated",
      "notifications/subscriptions/acknowledged",
      "notifications/elicitation/complete"
    ]
    const client = yield* ClientSession.make({
      clientInfo,
      capabilities: options.capabilities ?? {},
      supportedVersions: [options.version],
      ...(options.handlers === undefined ? {} : { handlers: options.handlers }),
      notificationHandlers: new Map(methods.map((m) => [m, record(m)]))
    }).pipe(Effect.provideService(Transport.Transport, clientEnd), Effect.orDie)
    return {
      context,
      server,
      client,
      notifications,
      request: (method: string, params?: object) => client.request(method, params ?? {})
    } satisfies Connected
  })

/** Drains the notifications received so far (after letting in-flight deliveries land). */
export const drain = (queue: Queue.Queue<{ readonly method: string; readonly params: unknown }>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 20; i++) yield* Effect.yieldNow
    return yield* Queue.clear(queue)
  })
