/**
 * How the host routes a call to its server (a tool's or prompt's by catalog
 * name, a resource's by URI): the server's turn (its concurrency permits) and
 * its client, each waited for within the call's timeout, then the request
 * with the whole timeout (it cancels itself on the server when that runs
 * out); a tool call approved by the consent hook first. A call that failed
 * because its connection closed reaches its caller once the host has let go
 * of that connection.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import * as Peer from "@effect-mcp/engine/Peer"
import * as PeerError from "@effect-mcp/engine/PeerError"
import * as Transport from "@effect-mcp/engine/Transport"
import * as StreamableHttpClient from "@effect-mcp/http/StreamableHttpClient"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Catalog from "../Catalog.ts"
import type * as Consent from "../Consent.ts"
import { HostError } from "../HostError.ts"
import type * as McpHost from "../McpHost.ts"
import type * as Supervisor from "./supervisor.ts"

/** A server that cannot serve now, and why. */
export const unavailable = (server: string, why: string) =>
  new HostError({ reason: "Unavailable", server, message: `server ${JSON.stringify(server)} is unavailable: ${why}` })

const unknownServer = (server: string) =>
  new HostError({ reason: "UnknownServer", server, message: `no server named ${JSON.stringify(server)}` })

/** What routing reads: the servers' slots, the catalog's items now, the consent hooks, the host's options. */
export interface Deps {
  readonly slots: ReadonlyMap<string, Supervisor.Slot>
  readonly tool: (name: string) => Catalog.Entry<Tools.Tool> | undefined
  readonly prompt: (name: string) => Catalog.Entry<Prompts.Prompt> | undefined
  /** The servers that may serve a URI (`Catalog.serversForUri` of the catalog now). */
  readonly serversForUri: (uri: string) => Effect.Effect<ReadonlyArray<string>>
  readonly consent: Consent.ConsentShape
  readonly options: McpHost.Options
}

/**
 * `wait`, failing as the server being unavailable once `timeout` ran out; the failure says what the server's
 * last attempt to connect met, when it is between attempts.
 */
const bounded = <B, E, R>(
  wait: Effect.Effect<B, E, R>,
  slot: Supervisor.Slot,
  timeout: Duration.Duration,
  what: string
): Effect.Effect<B, E | HostError, R> =>
  Effect.timeoutOrElse(wait, {
    duration: timeout,
    orElse: () =>
      Effect.flatMap(SubscriptionRef.get(slot.status), (status) =>
        Effect.fail(
          unavailable(
            slot.name,
            `no ${what} within ${Duration.format(timeout)}` +
              (status._tag === "Degraded" ? ` (its last attempt: ${status.failure.message})` : "")
          )
        )
      )
  })

/**
 * Whether a call failed because its session closed for good: not an expired Streamable HTTP session, which the
 * client renews by itself (the supervisor keeps the connection then).
 */
const closedForGood = (error: unknown): boolean =>
  error instanceof PeerError.SessionClosed &&
  !(error.cause instanceof Transport.TransportError && StreamableHttpClient.isSessionExpired(error.cause))

/** The host's routes over `deps`. */
export const make = (deps: Deps) => {
  const slotOf = (server: string) =>
    Effect.suspend(() => {
      const slot = deps.slots.get(server)
      return slot === undefined ? Effect.fail(unknownServer(server)) : Effect.succeed(slot)
    })

  const clientOf = (slot: Supervisor.Slot): Effect.Effect<McpClient.McpClientShape, HostError> =>
    Effect.suspend(() => {
      if (slot.client !== undefined) return Effect.succeed(slot.client)
      return SubscriptionRef.changes(slot.status).pipe(
        Stream.filter((s) => (s._tag === "Ready" && slot.client !== undefined) || s._tag === "Failed"),
        Stream.runHead,
        Effect.flatMap((found) => {
          const status = found._tag === "Some" ? found.value : undefined
          return slot.client !== undefined && status?._tag === "Ready"
            ? Effect.succeed(slot.client)
            : Effect.fail(unavailable(slot.name, status?._tag === "Failed" ? status.failure.message : "closed"))
        })
      )
    })

  // The call's own timeout, else its server's `callTimeout`, else the host's.
  const timeoutOf = (slot: Supervisor.Slot, callOptions: McpHost.CallOptions | undefined) => {
    const input = callOptions?.timeout ?? deps.options.servers?.[slot.name]?.callTimeout ?? deps.options.callTimeout
    return input === undefined ? undefined : Duration.fromInputUnsafe(input)
  }
  // Without a call timeout, a call still waits for its turn and for a connection no longer than a request may
  // take: a server down (retried for minutes under the reconnect schedule) fails the call, saying why.
  const waitLimit = Duration.fromInputUnsafe(deps.options.client?.peer?.requestTimeout ?? Peer.defaultRequestTimeout)

  // The server's turn (held until the scope closes), then its client, each waited for within `timeout`: every
  // routed call, a Stream's as well as an Effect's, waits this way.
  const turnAndClient = (
    slot: Supervisor.Slot,
    timeout: Duration.Duration | undefined
  ): Effect.Effect<McpClient.McpClientShape, HostError, Scope.Scope> =>
    Effect.andThen(
      bounded(Semaphore.takeScoped(slot.permits, 1), slot, timeout ?? waitLimit, "turn"),
      bounded(clientOf(slot), slot, timeout ?? waitLimit, "connection")
    )

  // A call whose session closed for good fails once the host has let go of that connection (the supervisor
  // cleared the client, then said so in the status). The caller may run before the supervisor does: without
  // this, a call made as soon as the failure is seen is handed the closed connection again, and the status
  // still says Ready. Bounded all the same, so a failure is never held for good.
  const letGo = (slot: Supervisor.Slot, client: McpClient.McpClientShape, error: unknown): Effect.Effect<void> =>
    Effect.suspend(() =>
      !closedForGood(error)
        ? Effect.void
        : SubscriptionRef.changes(slot.status).pipe(
            // Ready without a client: cleared, not said yet.
            Stream.filter((status) => slot.client !== client && (status._tag !== "Ready" || slot.client !== undefined)),
            Stream.runHead,
            Effect.timeoutOption(waitLimit),
            Effect.asVoid
          )
    )

  // The route of one call: the server's turn and its client, each waited for within the call's timeout; the
  // request then has the whole timeout (and cancels itself on the server when it runs out).
  const routed = <A>(
    slot: Supervisor.Slot,
    callOptions: McpHost.CallOptions | undefined,
    f: (
      client: McpClient.McpClientShape,
      options: McpHost.CallOptions | undefined
    ) => Effect.Effect<A, McpClient.CallError>
  ): Effect.Effect<A, McpHost.CallError> => {
    return Effect.scoped(routedIn(slot, timeoutOf(slot, callOptions), callOptions, f))
  }

  // Made once: a generator function made per call costs its own generator prototype and map.
  const routedIn = Effect.fnUntraced(function* <A>(
    slot: Supervisor.Slot,
    timeout: Duration.Duration | undefined,
    callOptions: McpHost.CallOptions | undefined,
    f: (
      client: McpClient.McpClientShape,
      options: McpHost.CallOptions | undefined
    ) => Effect.Effect<A, McpClient.CallError>
  ) {
    const client = yield* turnAndClient(slot, timeout)
    return yield* f(client, timeout === undefined ? callOptions : { ...callOptions, timeout }).pipe(
      Effect.tapError((error) => letGo(slot, client, error))
    )
  })

  const toolRoute = Effect.fnUntraced(function* (name: string, args: { readonly [key: string]: unknown } | undefined) {
    const entry = deps.tool(name)
    if (entry === undefined) {
      return yield* new HostError({ reason: "UnknownTool", message: `no tool named ${JSON.stringify(name)}` })
    }
    const approved = yield* deps.consent.toolCall({
      server: entry.server,
      name,
      tool: entry.item,
      arguments: args
    })
    if (!approved) {
      return yield* new HostError({
        reason: "Declined",
        server: entry.server,
        message: `the call of ${JSON.stringify(name)} was declined`
      })
    }
    return { entry, slot: deps.slots.get(entry.server)! }
  })

  // A tool that failed for want of a client capability the host lacks: say which, once per server and tool.
  // Only what this host's connection did not declare: a server may pass on a -32021 from a server behind it
  // (a gateway, another host), which says nothing of this host's handlers.
  const warnCapability = (slot: Supervisor.Slot, tool: string, error: unknown): Effect.Effect<void> => {
    if (!(error instanceof McpError.MissingRequiredClientCapability) || slot.warned.has(`tool:${tool}`)) {
      return Effect.void
    }
    const declared: Record<string, unknown> = slot.client?.session.state.declared ?? {}
    const lacking = Object.keys(error.data.requiredCapabilities).filter((name) => declared[name] === undefined)
    if (lacking.length === 0) return Effect.void
    slot.warned.add(`tool:${tool}`)
    return Effect.logWarning(
      `tool ${JSON.stringify(tool)} of server ${JSON.stringify(slot.name)} needs the client capability ` +
        `${lacking.join(", ")}, which this host does not declare (give it the handler service)`
    ).pipe(Effect.annotateLogs({ server: slot.name }))
  }

  // The server of a resource: the one chosen, else the one that may serve its URI.
  const resourceSlot = Effect.fnUntraced(function* (uri: string, chosen: string | undefined) {
    if (chosen !== undefined) return yield* slotOf(chosen)
    const candidates = yield* deps.serversForUri(uri)
    if (candidates.length !== 1) {
      return yield* new HostError({
        reason: "UnknownResource",
        message:
          candidates.length === 0
            ? `no server lists ${JSON.stringify(uri)}`
            : `several servers list ${JSON.stringify(uri)} (${candidates.join(", ")}): choose one with \`server\``
      })
    }
    return yield* slotOf(candidates[0]!)
  })

  const route: McpHost.McpHostShape["route"] = (kind, name, args, f, callOptions) => {
    const { server, ...options } = callOptions ?? {}
    switch (kind) {
      case "tool":
        return Effect.flatMap(toolRoute(name, args), ({ entry, slot }) =>
          routed(slot, options, (client, o) => f(client, entry.item.name, o)).pipe(
            Effect.tapError((error) => warnCapability(slot, entry.item.name, error))
          )
        )
      case "prompt":
        return Effect.suspend(() => {
          const entry = deps.prompt(name)
          if (entry === undefined) {
            return Effect.fail(
              new HostError({ reason: "UnknownPrompt", message: `no prompt named ${JSON.stringify(name)}` })
            )
          }
          return routed(deps.slots.get(entry.server)!, options, (client, o) => f(client, entry.item.name, o))
        })
      case "resource":
        return Effect.flatMap(resourceSlot(name, server), (slot) =>
          routed(slot, options, (client, o) => f(client, name, o))
        )
    }
  }

  // A tool call as a Stream, waiting as `callTool` does: the turn is held until the Stream ends (Stream.unwrap
  // gives its effect the Stream's scope).
  const streamedCall = <A>(
    name: string,
    args: { readonly [key: string]: unknown } | undefined,
    callOptions: McpHost.CallOptions | undefined,
    f: (
      client: McpClient.McpClientShape,
      tool: string,
      options: McpHost.CallOptions | undefined
    ) => Stream.Stream<A, McpHost.CallError>
  ): Stream.Stream<A, McpHost.CallError> =>
    Stream.unwrap(
      Effect.map(toolRoute(name, args), ({ entry, slot }) => {
        const timeout = timeoutOf(slot, callOptions)
        const o = timeout === undefined ? callOptions : { ...callOptions, timeout }
        return Stream.unwrap(
          Effect.map(turnAndClient(slot, timeout), (client) =>
            Stream.tapError(f(client, entry.item.name, o), (error) => letGo(slot, client, error))
          )
        )
      })
    )

  return { slotOf, clientOf, route, streamedCall }
}
