/**
 * In-memory servers for the host's tests: a `Connector` that links each
 * configured name to a server built in the test's scope, over a memory pair
 * (JSON through the codec), and lets a test end a server's side of the
 * current connection as a crash would.
 */
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Connector from "../src/Connector.ts"
import type * as McpConfig from "../src/McpConfig.ts"

export interface Memory {
  readonly connector: Layer.Layer<Connector.Connector>
  /** Connection attempts per server. */
  readonly attempts: Map<string, number>
  /** Ends the server side of a server's current connection (the client sees the connection close). */
  readonly crash: (name: string) => Effect.Effect<void>
  /** Drops everything the client sends on the server's current connection (a server that stopped answering). */
  readonly mute: (name: string) => void
}

/**
 * A connector over in-memory servers; `failFirst` attempts of a server fail
 * to connect (a refused transport), as a server that is not up yet.
 */
export const memory = (
  servers: { readonly [name: string]: Layer.Layer<McpServer.McpServer> },
  options: { readonly failFirst?: { readonly [name: string]: number } } = {}
): Effect.Effect<Memory, never, Scope.Scope> =>
  Effect.gen(function* () {
    const contexts = new Map<string, Context.Context<McpServer.McpServer>>()
    for (const [name, layer] of Object.entries(servers)) contexts.set(name, yield* Layer.build(layer))
    const attempts = new Map<string, number>()
    const current = new Map<string, MemoryTransport.End>()
    const mutes = new Map<string, () => void>()
    const connect: Connector.Connect = (name) =>
      Effect.gen(function* () {
        const attempt = (attempts.get(name) ?? 0) + 1
        attempts.set(name, attempt)
        if (attempt <= (options.failFirst?.[name] ?? 0)) {
          return yield* new Transport.TransportError({ reason: "Io", message: `connection refused (${attempt})` })
        }
        // Closing takes a while after the ends are closed, as stopping a process does (finalizers run in reverse).
        yield* Effect.addFinalizer(() => Effect.repeat(Effect.yieldNow, { times: 50 }))
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
          incoming: clientEnd.incoming,
          send: (frame, sendOptions) => (muted ? Effect.void : clientEnd.send(frame, sendOptions))
        }
        return { transport }
      })
    return {
      connector: Connector.layer(connect),
      attempts,
      crash: (name) => Effect.suspend(() => current.get(name)?.close ?? Effect.void),
      mute: (name) => mutes.get(name)?.()
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
