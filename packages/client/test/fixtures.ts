import type * as McpClient from "@effect-mcp/client/McpClient"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as ServerSession from "@effect-mcp/engine/ServerSession"
import type * as Session from "@effect-mcp/engine/Session"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as McpTest from "@effect-mcp/testing/McpTest"
import type * as Layer from "effect/Layer"

/** The one resource the test server refuses to subscribe to. */
export const refusedUri = "test://refused"

export const serverInfo = { name: "test-server", version: "1.0.0" }
export const clientInfo = { name: "test-client", version: "1.0.0" }

export const versions = ProtocolVersion.all
export const statefulVersions = ProtocolVersion.all.filter((v) => v !== "2026-07-28")

type Params = { readonly [key: string]: unknown }
const asParams = (u: unknown): Params => (typeof u === "object" && u !== null ? (u as Params) : {})
const metaOf = (u: unknown): Params => asParams(asParams(u)._meta)

/** What the test server saw, for assertions. */
export interface ServerLog {
  readonly requests: Array<{ readonly method: string; readonly params: Params }>
  readonly subscribed: Array<string>
  readonly unsubscribed: Array<string>
  readonly listens: Array<Params>
  readonly cancelled: Array<string>
  readonly clientCapabilities: Array<unknown>
}

/** Sends notifications to every open listen stream (2026-07-28) or the session (stateful). */
export interface ServerControl {
  readonly log: ServerLog
  /** Waits until `check` holds of the log; re-checked on every entry, no polling. */
  readonly awaitLog: (check: (log: ServerLog) => boolean) => Effect.Effect<void>
  readonly session: () => Session.SessionShape
  /** Emits a notification on every listen stream whose filter asked for it, or session-wide. */
  readonly emit: (method: string, params?: Params) => Effect.Effect<void>
}

/** A paged list of `count` items, `pageSize` per page, the cursor being the next index. */
const page = <A>(items: ReadonlyArray<A>, cursor: unknown, pageSize: number) => {
  const start = typeof cursor === "string" ? Number(cursor) : 0
  const end = Math.min(items.length, start + pageSize)
  return { items: items.slice(start, end), nextCursor: end < items.length ? String(end) : undefined }
}

export interface ServerOptions {
  readonly toolCount?: number
  readonly pageSize?: number
  readonly capabilities?: Session.Capabilities
  readonly supportedVersions?: ReadonlyArray<ProtocolVersion.ProtocolVersion>
  /** Extra or replacing handlers. */
  readonly handlers?: ReadonlyArray<readonly [string, (control: ServerControl) => Session.Handler]>
}

export const fullCapabilities = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {}
}

export const tools = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    name: `tool-${i}`,
    description: `tool number ${i}`,
    inputSchema: { type: "object" as const, properties: { text: { type: "string" } } }
  }))

export const structuredTool = {
  name: "structured",
  inputSchema: { type: "object" as const },
  outputSchema: {
    type: "object",
    properties: { sum: { type: "integer" }, label: { type: "string" } },
    required: ["sum"]
  }
}

const text = (t: string) => ({ content: [{ type: "text", text: t }] })

/** A server with every feature, built from ServerSession handler maps. */
export const makeServer = (end: Transport.TransportShape, options: ServerOptions = {}) =>
  Effect.gen(function* () {
    const pageSize = options.pageSize ?? 50
    const toolList = [...tools(options.toolCount ?? 3), structuredTool]
    const resources = Array.from({ length: options.toolCount ?? 3 }, (_, i) => ({
      uri: `test://r/${i}`,
      name: `r${i}`
    }))
    const log: ServerLog = {
      requests: [],
      subscribed: [],
      unsubscribed: [],
      listens: [],
      cancelled: [],
      clientCapabilities: []
    }
    // Completed (and replaced) on every log entry, for `awaitLog`.
    let logged = Deferred.makeUnsafe<void>()
    const touch = () => {
      const current = logged
      logged = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(current, Exit.void)
    }
    const awaitLog = (check: (log: ServerLog) => boolean): Effect.Effect<void> =>
      Effect.suspend(() => (check(log) ? Effect.void : Effect.andThen(Deferred.await(logged), awaitLog(check))))
    const listeners = new Set<{ readonly filter: Params; readonly current: CurrentRequest.CurrentRequestShape }>()
    let session: Session.SessionShape | undefined
    const control: ServerControl = {
      log,
      awaitLog,
      session: () => session!,
      emit: (method, params = {}) =>
        Effect.gen(function* () {
          if (listeners.size === 0) {
            yield* Effect.ignore(session!.notify(method, params))
            return
          }
          for (const { filter, current } of listeners) {
            const wanted =
              (method === "notifications/tools/list_changed" && filter.toolsListChanged === true) ||
              (method === "notifications/prompts/list_changed" && filter.promptsListChanged === true) ||
              (method === "notifications/resources/list_changed" && filter.resourcesListChanged === true) ||
              (method === "notifications/resources/updated" &&
                Array.isArray(filter.resourceSubscriptions) &&
                filter.resourceSubscriptions.includes(params.uri))
            if (wanted) {
              yield* current.notify(method, {
                ...params,
                _meta: { "io.modelcontextprotocol/subscriptionId": current.id }
              })
            }
          }
        })
    }
    const record =
      (method: string, handler: Session.Handler): Session.Handler =>
      (params, info) => {
        log.requests.push({ method, params: asParams(params) })
        log.clientCapabilities.push(info.peerCapabilities)
        touch()
        return handler(params, info)
      }
    const base: Array<readonly [string, Session.Handler]> = [
      [
        "tools/list",
        (p) =>
          Effect.sync(() => {
            const { items, nextCursor } = page(toolList, asParams(p).cursor, pageSize)
            return nextCursor === undefined ? { tools: items } : { tools: items, nextCursor }
          })
      ],
      [
        "resources/list",
        (p) =>
          Effect.sync(() => {
            const { items, nextCursor } = page(resources, asParams(p).cursor, pageSize)
            return nextCursor === undefined ? { resources: items } : { resources: items, nextCursor }
          })
      ],
      [
        "resources/templates/list",
        () => Effect.succeed({ resourceTemplates: [{ uriTemplate: "test://t/{id}", name: "t" }] })
      ],
      [
        "resources/read",
        (p) => {
          const uri = String(asParams(p).uri)
          return uri.startsWith("test://")
            ? Effect.succeed({ contents: [{ uri, mimeType: "text/plain", text: `body of ${uri}` }] })
            : Effect.fail(new McpError.ResourceNotFound({ message: `no ${uri}`, data: { uri } }))
        }
      ],
      [
        "resources/subscribe",
        (p) =>
          // `test://refused` cannot be subscribed to.
          asParams(p).uri === refusedUri
            ? Effect.fail(new McpError.InvalidParams({ message: `no subscription to ${refusedUri}` }))
            : Effect.as(
                Effect.sync(() => {
                  log.subscribed.push(String(asParams(p).uri))
                  touch()
                }),
                {}
              )
      ],
      [
        "resources/unsubscribe",
        (p) =>
          Effect.as(
            Effect.sync(() => {
              log.unsubscribed.push(String(asParams(p).uri))
              touch()
            }),
            {}
          )
      ],
      [
        "prompts/list",
        () => Effect.succeed({ prompts: [{ name: "greet", arguments: [{ name: "who", required: true }] }] })
      ],
      [
        "prompts/get",
        (p) => {
          const args = asParams(asParams(p).arguments)
          return Effect.succeed({
            description: "greeting",
            messages: [{ role: "user", content: { type: "text", text: `hello ${String(args.who)}` } }]
          })
        }
      ],
      [
        "completion/complete",
        (p) => {
          const value = String(asParams(asParams(p).argument).value)
          return Effect.succeed({
            completion: { values: ["alpha", "alpine", "beta"].filter((v) => v.startsWith(value)) }
          })
        }
      ],
      ["logging/setLevel", () => Effect.succeed({})],
      [
        "subscriptions/listen",
        (p) =>
          Effect.gen(function* () {
            const current = yield* CurrentRequest.CurrentRequest
            const filter = asParams(asParams(p).notifications)
            const uris = filter.resourceSubscriptions
            if (Array.isArray(uris) && uris.includes(refusedUri)) {
              return yield* new McpError.InvalidParams({ message: `no subscription to ${refusedUri}` })
            }
            const entry = { filter, current }
            yield* current.notify("notifications/subscriptions/acknowledged", {
              notifications: filter,
              _meta: { "io.modelcontextprotocol/subscriptionId": current.id }
            })
            listeners.add(entry)
            // Logged once `emit` reaches it.
            log.listens.push(filter)
            touch()
            return yield* Effect.never.pipe(
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  listeners.delete(entry)
                  log.cancelled.push("subscriptions/listen")
                  touch()
                })
              )
            )
          })
      ],
      [
        "tools/call",
        (p, info) =>
          Effect.gen(function* () {
            const params = asParams(p)
            const args = asParams(params.arguments)
            const current = yield* CurrentRequest.CurrentRequest
            switch (params.name) {
              case "structured":
                return {
                  ...text("3"),
                  structuredContent: { sum: Number(args.a ?? 1) + Number(args.b ?? 2), label: "sum" }
                }
              case "bad-structured":
                return { ...text("oops"), structuredContent: { sum: "not a number" } }
              case "failing":
                return { content: [{ type: "text", text: "it broke" }], isError: true }
              case "progress":
                for (const n of [1, 2, 3]) {
                  yield* Effect.sleep("10 millis")
                  yield* current.progress({ progress: n, total: 3, message: `step ${n}` })
                }
                return text("done")
              case "log-flood":
                // Ten thousand log messages, then the result.
                for (let i = 0; i < 10_000; i++) {
                  yield* current.notify("notifications/message", { level: "info", logger: "test", data: i })
                }
                return text("flooded")
              case "log": {
                const level = metaOf(info.request.params)["io.modelcontextprotocol/logLevel"]
                if (!info.revision.stateless || level !== undefined) {
                  yield* current.notify("notifications/message", { level: "info", logger: "test", data: "hello log" })
                }
                return text("logged")
              }
              case "slow":
                return yield* Effect.never.pipe(
                  Effect.onInterrupt(() =>
                    Effect.sync(() => {
                      log.cancelled.push("tools/call")
                      touch()
                    })
                  )
                )
              default:
                return text(`echo ${String(args.text ?? params.name)}`)
            }
          })
      ]
    ]
    const handlers = new Map<string, Session.Handler>()
    for (const [method, handler] of base) handlers.set(method, record(method, handler))
    for (const [method, make] of options.handlers ?? []) handlers.set(method, record(method, make(control)))
    session = yield* ServerSession.make({
      serverInfo,
      capabilities: options.capabilities ?? fullCapabilities,
      instructions: "be nice",
      supportedVersions: options.supportedVersions,
      handlers
    }).pipe(Effect.provideService(Transport.Transport, end))
    return control
  })

/** Wraps a transport end so the frames it sends are recorded. */
export const recording = (end: Transport.TransportShape) => {
  const sent: Array<JsonRpc.Message> = []
  // Completed (and replaced) on every send, for `awaitMethod`.
  let wrote = Deferred.makeUnsafe<void>()
  const transport: Transport.TransportShape = {
    incoming: end.incoming,
    send: (frame, options) =>
      Effect.suspend(() => {
        for (const message of Array.isArray(frame) ? frame : [frame]) sent.push(message as JsonRpc.Message)
        const current = wrote
        wrote = Deferred.makeUnsafe<void>()
        Deferred.doneUnsafe(current, Exit.void)
        return end.send(frame, options)
      })
  }
  const methods = () => sent.flatMap((m) => ("method" in m ? [m.method] : []))
  /** Waits until `check` holds of what was sent; re-checked on every send, no polling. */
  const awaitSent = (check: () => boolean): Effect.Effect<void> =>
    Effect.suspend(() => (check() ? Effect.void : Effect.andThen(Deferred.await(wrote), awaitSent(check))))
  /** Waits until a message of `method` has been sent. */
  const awaitMethod = (method: string): Effect.Effect<void> => awaitSent(() => methods().includes(method))
  return { transport, sent, methods, awaitSent, awaitMethod }
}

/** An McpClient for `version` against the test server, connected by the McpTest harness. */
export const connect = <R = never>(
  version: ProtocolVersion.ProtocolVersion | ReadonlyArray<ProtocolVersion.ProtocolVersion>,
  options: {
    readonly server?: ServerOptions
    readonly client?: Partial<Omit<McpClient.Options, "clientInfo" | "supportedVersions">>
    readonly handlers?: Layer.Layer<R>
    readonly codec?: boolean
  } = {}
) =>
  Effect.gen(function* () {
    let control: ServerControl | undefined
    let wire: ReturnType<typeof recording> | undefined
    const serve = Effect.flatMap(Effect.service(Transport.Transport), (end) =>
      Effect.map(makeServer(end, options.server), (made) => {
        control = made
      })
    )
    const client = yield* McpTest.makeClientFor(serve, {
      revision: version,
      clientInfo,
      codec: options.codec ?? true,
      client: options.client,
      clientHandlers: options.handlers,
      clientTransport: (end) =>
        Effect.sync(() => {
          wire = recording(end)
          return wire.transport
        })
    })
    return { client, server: control!, wire: wire! }
  })
