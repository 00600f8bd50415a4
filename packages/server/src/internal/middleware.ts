/**
 * Where a server keeps its middleware and how it wraps the session handlers.
 * A registry per server state (a WeakMap, so the server's state needs no slot
 * for it); each handler is wrapped once per server and reads the composed
 * chain live, so Layers registered later still apply and a server without
 * middleware pays one field read per request.
 */
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Session from "@effect-mcp/engine/Session"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { McpServerShape } from "../McpServer.ts"
import { type Obj, paramsOf } from "./params.ts"
import type { Readiness } from "./readiness.ts"

/** What a middleware learns of the request it wraps (the public `Middleware.Request`). */
export interface Request {
  /** The JSON-RPC method. */
  readonly method: string
  /** A tool's or prompt's name, a resource's URI, a completion reference's name or URI; else undefined. */
  readonly target: string | undefined
  /** The request's params as received (arguments included: keep them out of logs). */
  readonly params: unknown
  /** The session's view of the request (revision, the client's capabilities and info, the session state). */
  readonly info: Session.RequestInfo
  /** The HTTP `Mcp-Session-Id`, undefined outside a stateful HTTP session. */
  readonly sessionId: string | undefined
  /** The authenticated caller, when an HTTP transport authenticates requests. */
  readonly principal: Transport.Authenticated | undefined
  /** The server serving the request. */
  readonly server: McpServerShape
}

/** The handling of one request. */
export type Next = Effect.Effect<unknown, McpError.McpError, CurrentRequest.CurrentRequest>

/** A middleware: the request and what handles it, to the Effect that runs instead. */
export type Middleware = (request: Request, next: Next) => Next

interface Entry {
  readonly order: number
  readonly seq: number
  readonly middleware: ReadonlyArray<Middleware>
}

/** One server's middleware, outermost first; `chain` is undefined while there is none. */
export class Registry {
  private readonly entries: Array<Entry> = []
  private seq = 0
  chain: ReadonlyArray<Middleware> | undefined = undefined

  add(order: number, middleware: ReadonlyArray<Middleware>): Entry {
    const entry: Entry = { order, seq: this.seq++, middleware }
    this.entries.push(entry)
    this.update()
    return entry
  }

  remove(entry: Entry): void {
    const i = this.entries.indexOf(entry)
    if (i >= 0) this.entries.splice(i, 1)
    this.update()
  }

  private update(): void {
    const sorted = [...this.entries].sort((a, b) => a.order - b.order || a.seq - b.seq)
    const chain = sorted.flatMap((e) => e.middleware)
    this.chain = chain.length === 0 ? undefined : chain
  }
}

const registries = new WeakMap<object, Registry>()

/** The registry of a server (made on first use). */
export const registryOf = (server: object): Registry => {
  let registry = registries.get(server)
  if (registry === undefined) {
    registry = new Registry()
    registries.set(server, registry)
  }
  return registry
}

/** The item a request is about: a tool's or prompt's name, a resource's URI, a completion's reference. */
export const targetOf = (method: string, params: unknown): string | undefined => {
  const p = paramsOf(params)
  switch (method) {
    case "tools/call":
    case "prompts/get":
      return typeof p.name === "string" ? p.name : undefined
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      return typeof p.uri === "string" ? p.uri : undefined
    case "completion/complete": {
      const ref = (p.ref ?? {}) as Obj
      return typeof ref.name === "string" ? ref.name : typeof ref.uri === "string" ? ref.uri : undefined
    }
    default:
      return undefined
  }
}

const run = (chain: ReadonlyArray<Middleware>, i: number, request: Request, handler: Session.Handler): Next =>
  i === chain.length
    ? Effect.suspend(() => handler(request.params, request.info))
    : chain[i]!(
        request,
        Effect.suspend(() => run(chain, i + 1, request, handler))
      )

/**
 * Wraps every handler so that it runs through the server's middleware chain (read per request), after the
 * server's `ready` (when it has one) while that has not completed.
 */
export const wrapAll = (
  server: McpServerShape,
  handlers: ReadonlyMap<string, Session.Handler>,
  readiness?: Readiness | undefined
): ReadonlyMap<string, Session.Handler> => {
  const registry = registryOf(server)
  const wrapped = new Map<string, Session.Handler>()
  for (const [method, handler] of handlers) {
    const chained: Session.Handler = (params, info) => {
      const chain = registry.chain
      if (chain === undefined) return handler(params, info)
      return Effect.withFiber((fiber) => {
        const current = Context.getOrUndefined(fiber.context, CurrentRequest.CurrentRequest)
        const request: Request = {
          method,
          target: targetOf(method, params),
          params,
          info,
          sessionId: current?.sessionId,
          principal: current?.principal,
          server
        }
        return run(chain, 0, request, handler)
      })
    }
    wrapped.set(
      method,
      readiness === undefined
        ? chained
        : (params, info) =>
            readiness.done
              ? chained(params, info)
              : Effect.andThen(
                  readiness.wait,
                  Effect.suspend(() => chained(params, info))
                )
    )
  }
  return wrapped
}
