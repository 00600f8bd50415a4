/**
 * Resource subscriptions through the gateway. A downstream
 * `resources/subscribe` (or a 2026-07-28 `subscriptions/listen` naming
 * `resourceSubscriptions`) of a URI is routed to the upstream serving it, as
 * a read is; the upstream is subscribed once per URI however many downstream
 * sessions follow it (an `RcMap` by URI), and unsubscribed when the last one
 * goes: by `resources/unsubscribe`, by its session closing, or by its listen
 * request ending. Each `notifications/resources/updated` of the upstream is
 * announced through the gateway's server, which sends it to exactly the
 * sessions (and listen streams) subscribed to its URI: the server keeps who
 * subscribed to what, the gateway only what it asked of upstreams.
 *
 * The gateway's URIs are the upstreams' (resources keep their URIs), so an
 * update is announced with the URI the upstream sent.
 *
 * A downstream subscribe is answered once the upstream took the subscription
 * (`McpClient.subscribeResource`), or fails with the upstream's refusal (the
 * refused entry is not kept: the next subscribe asks again); an upstream not
 * connected then is subscribed once it is, and the subscribe is answered at
 * once. An upstream subscription outlives its connection: when the
 * connection is lost, the URI is subscribed again on the next one (an upstream
 * that refuses it then is asked again on the one after, not before).
 *
 * A downstream session holds at most `maxSubscriptions` URIs, and a listen
 * request names at most as many: each one held costs a follower upstream and
 * the server's record of it, so one session subscribing without end would
 * grow the gateway without end. One past the bound is refused
 * (`tooManySubscriptions`) before anything is asked upstream; the session's
 * other subscriptions are kept, and an unsubscribe makes room.
 *
 * Under a policy, a URI the caller may not see is refused as one that does not
 * exist (`resources/subscribe`), and a listen stream's acknowledgement names
 * only those of its URIs its principal may see. Each update is checked per
 * recipient as the server announces it (`updateVisible`, the server's
 * `resourceUpdateVisible`), sessions and listen streams alike: the server's
 * subscriptions also cover the URIs under one, which a check at subscribe
 * time cannot know.
 */
import type * as McpClient from "@effect-mcp/client/McpClient"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import type * as Session from "@effect-mcp/engine/Session"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Catalog from "@effect-mcp/host/Catalog"
import type * as McpHost from "@effect-mcp/host/McpHost"
import type * as ServerStatus from "@effect-mcp/host/ServerStatus"
import * as McpError from "@effect-mcp/protocol/McpError"
import type * as Resources from "@effect-mcp/protocol/Resources"
import type * as McpServer from "@effect-mcp/server/McpServer"
import * as Middleware from "@effect-mcp/server/Middleware"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Policy from "../Policy.ts"
import * as Items from "./items.ts"

// The literal text of a URI template before its first expression: the URIs it can name start with it.
const literalPrefix = (template: string) => {
  const brace = template.indexOf("{")
  return brace < 0 ? template : template.slice(0, brace)
}

/**
 * The catalog item serving `uri`: the resource listing it (first in configuration order), else the template
 * with the longest literal prefix it starts with (as the host routes a read).
 */
export const itemForUri = (catalog: Catalog.Catalog, uri: string): Policy.Item | undefined => {
  const fixed = catalog.resources.find((r) => r.name === uri)
  if (fixed !== undefined) return Items.itemOf("resource", uri, fixed)
  let best: Catalog.Entry<object> | undefined
  let length = 0
  for (const t of catalog.resourceTemplates) {
    const prefix = literalPrefix(t.name)
    if (prefix.length > length && uri.startsWith(prefix)) {
      best = t
      length = prefix.length
    }
  }
  return best === undefined ? undefined : Items.itemOf("template", best.name, best)
}

/** Whether `principal` may see `uri`: an item serves it, and the policy shows that item to it. */
const visibleTo = (
  catalog: Catalog.Catalog,
  policy: Policy.Policy,
  principal: Transport.Authenticated | undefined,
  uri: string
): boolean => {
  const item = itemForUri(catalog, uri)
  return item !== undefined && policy(item, principal)
}

/**
 * The server's `resourceUpdateVisible` under `policy`: an update of `uri` is told to a recipient whose principal
 * may see it, checked against the catalog as it is when the update is announced.
 */
export const updateVisible =
  (catalog: Effect.Effect<Catalog.Catalog>, policy: Policy.Policy) =>
  (uri: string, principal: Transport.Authenticated | undefined): Effect.Effect<boolean> =>
    Effect.map(catalog, (now) => visibleTo(now, policy, principal, uri))

/**
 * The listen stream's request as its handler sees it, its acknowledgement as `principal` may see it: it names
 * only the URIs it may see (one it may not as one that does not exist). Its updates are checked by the server
 * (`updateVisible`).
 */
const seenBy = (
  current: CurrentRequest.CurrentRequestShape,
  catalog: Effect.Effect<Catalog.Catalog>,
  policy: Policy.Policy,
  principal: Transport.Authenticated | undefined
): CurrentRequest.CurrentRequestShape => {
  const notify = (method: string, params?: object | undefined): Effect.Effect<void> => {
    const acknowledged = (params as { readonly notifications?: Resources.SubscriptionFilter } | undefined)
      ?.notifications
    if (method !== "notifications/subscriptions/acknowledged" || acknowledged?.resourceSubscriptions === undefined) {
      return current.notify(method, params)
    }
    const uris = acknowledged.resourceSubscriptions
    return Effect.flatMap(catalog, (now) =>
      current.notify(method, {
        ...params,
        notifications: {
          ...acknowledged,
          resourceSubscriptions: uris.filter((uri) => visibleTo(now, policy, principal, uri))
        }
      })
    )
  }
  return {
    id: current.id,
    method: current.method,
    progressToken: current.progressToken,
    progress: (update) => current.progress(update),
    notify,
    principal,
    sessionId: current.sessionId
  }
}

/** Whether an upstream's connection declared `resources.subscribe`. */
export const supportsSubscriptions = (status: ServerStatus.ServerStatus): boolean =>
  status._tag === "Ready" && status.connection.serverCapabilities.resources?.subscribe === true

/** What a downstream subscribe is answered when the upstream refused `uri`: its error, when it is a protocol one. */
const refusal = (upstream: string, uri: string, cause: Cause.Cause<unknown>): McpError.McpError => {
  const error = Cause.squash(cause)
  return McpError.isMcpError(error)
    ? error
    : new McpError.InternalError({
        message: `resources/subscribe: upstream ${JSON.stringify(upstream)} did not take ${Items.echo(uri)}: ${String(error)}`
      })
}

const track = (supporting: Set<string>, change: ServerStatus.StatusChange) =>
  supportsSubscriptions(change.status) ? supporting.add(change.server) : supporting.delete(change.server)

/** Records in `supporting` the upstreams whose connection supports subscriptions now. */
export const supportingNow = (host: McpHost.McpHostShape, supporting: Set<string>): Effect.Effect<void> =>
  Effect.forEach(
    host.servers,
    (name) =>
      Effect.map(Effect.result(host.status(name)), (status) => {
        if (status._tag === "Success") track(supporting, { server: name, status: status.success })
      }),
    { discard: true }
  )

/** The most URIs a downstream session holds (and a listen request names) by default. */
export const defaultMaxSubscriptions = 1000

/**
 * What a subscribe past the bound is answered: the server's code for a limit (`Middleware.Code.RateLimited`, as
 * `ToolLimits` refuses a call past its concurrency), the bound in `data`.
 */
export const tooManySubscriptions = (maxSubscriptions: number): McpError.JsonRpcError =>
  new McpError.JsonRpcError({
    code: Middleware.Code.RateLimited,
    message: `Too many subscriptions: a session holds at most ${maxSubscriptions}; unsubscribe from one first`,
    data: { maxSubscriptions }
  })

/**
 * The middleware serving `resources/subscribe`, `resources/unsubscribe` and the resource part of
 * `subscriptions/listen` upstream (the server's own handlers then record the session's subscriptions),
 * for as long as the scope lives; meanwhile `supporting` holds the upstreams whose connection supports
 * subscriptions. A session holds at most `maxSubscriptions` URIs, a listen request names at most as many.
 */
export const make = (
  routes: Items.Routes,
  server: McpServer.McpServerShape,
  supporting: Set<string>,
  maxSubscriptions: number = defaultMaxSubscriptions
): Effect.Effect<Middleware.Middleware, never, Scope.Scope> =>
  Effect.gen(function* () {
    const host = routes.host
    // Which upstreams' connections support subscriptions, now and as they change (the server declares
    // `resources.subscribe` while one does).
    yield* supportingNow(host, supporting)
    yield* host.statusChanges.pipe(
      Stream.runForEach((change) => Effect.sync(() => track(supporting, change))),
      Effect.forkScoped
    )
    const firstOf = (upstream: string, accept: (status: ServerStatus.ServerStatus) => boolean) =>
      host.statusChanges.pipe(
        Stream.filter((change) => change.server === upstream && accept(change.status)),
        Stream.runHead
      )
    // Follows `uri` on the upstream's connection, then on each next one, until its scope closes. `first` is done
    // once the subscription on the connection now is taken (or refused: its error), or at once when there is none.
    const follow = (upstream: string, uri: string, first: Deferred.Deferred<void, McpError.McpError>) =>
      Effect.gen(function* () {
        const now = yield* Effect.result(host.status(upstream))
        if (now._tag === "Failure" || now.success._tag !== "Ready") yield* Deferred.succeed(first, undefined)
        let last: McpClient.McpClientShape | undefined
        while (true) {
          const client = yield* Effect.result(host.client(upstream))
          if (client._tag === "Failure") {
            // Failed until a restart: followed again once it is ready.
            yield* Deferred.succeed(first, undefined)
            yield* firstOf(upstream, (status) => status._tag === "Ready")
            continue
          }
          if (client.success === last) {
            // Refused, or ended with its connection: asked again on the next connection.
            yield* firstOf(upstream, (status) => status._tag !== "Ready")
            continue
          }
          last = client.success
          const exit = yield* Effect.exit(
            Effect.scoped(
              Effect.flatMap(client.success.subscribeResource(uri), (updates) =>
                Effect.andThen(
                  Deferred.succeed(first, undefined),
                  // What the cache kept of it is stale now (readCache.ts): dropped before the update is
                  // announced, so a subscriber reading on the update reads from the upstream.
                  Stream.runForEach(updates, (update) => {
                    routes.reads?.invalidate(upstream, update.uri)
                    return server.resourceUpdated(update.uri)
                  })
                )
              )
            )
          )
          if (Exit.isFailure(exit)) {
            // The first subscription refused: so is the downstream one that asked for it, with the upstream's error.
            if (yield* Deferred.fail(first, refusal(upstream, uri, exit.cause))) return
            yield* Effect.logDebug(`gateway: ${upstream} does not follow ${uri}`, exit.cause)
          }
        }
      })
    // Keyed by upstream and URI in one string (keys are compared by value); a refused subscription is not kept.
    const upstreams = yield* RcMap.make({
      lookup: (key: string) =>
        Effect.gen(function* () {
          const [upstream, uri] = key.split("\u0000") as [string, string]
          const first = yield* Deferred.make<void, McpError.McpError>()
          yield* Effect.forkScoped(follow(upstream, uri, first))
          yield* Deferred.await(first)
        }),
      idleTimeToLive: 0
    })
    const subscribed = (upstream: string, uri: string) =>
      RcMap.get(upstreams, keyOf(upstream, uri)).pipe(
        Effect.tapError(() => RcMap.invalidate(upstreams, keyOf(upstream, uri)))
      )
    const keyOf = (upstream: string, uri: string) => `${upstream}\u0000${uri}`

    /** The upstream to subscribe `uri` on for the request's principal, or why not. */
    const route = (request: Middleware.Request, uri: string) =>
      Effect.gen(function* () {
        const item = itemForUri(yield* host.catalog, uri)
        if (item === undefined || (routes.policy !== undefined && !routes.policy(item, request.principal))) {
          return yield* new McpError.ResourceNotFound({ message: "Resource not found", data: { uri: Items.echo(uri) } })
        }
        const status = yield* Effect.orDie(host.status(item.upstream))
        // An upstream not connected now is followed once it is; one that is and cannot is refused as it would be.
        if (status._tag === "Ready" && !supportsSubscriptions(status)) {
          return yield* new McpError.MethodNotFound({
            message: `resources/subscribe: upstream ${JSON.stringify(item.upstream)} does not support subscriptions`
          })
        }
        return item.upstream
      })

    // Per downstream session, the scope holding each URI it subscribed to.
    const held = new WeakMap<Session.State, Map<string, Scope.Closeable>>()
    const subscribe = (request: Middleware.Request, uri: string, next: Middleware.Next) =>
      Effect.gen(function* () {
        const holding = held.get(request.info.state)
        // Checked first: past the bound nothing is looked up or asked (a URI held already is no new one).
        if (holding !== undefined && holding.size >= maxSubscriptions && !holding.has(uri)) {
          return yield* tooManySubscriptions(maxSubscriptions)
        }
        const upstream = yield* route(request, uri)
        let uris = held.get(request.info.state)
        if (uris === undefined) {
          uris = new Map()
          held.set(request.info.state, uris)
          const mine = uris
          // The session's fibers run in its scope: its closing drops what it subscribed to.
          const session = yield* Effect.serviceOption(Scope.Scope)
          if (session._tag === "Some") {
            yield* Scope.addFinalizer(
              session.value,
              Effect.suspend(() => Effect.forEach(mine.values(), (s) => Scope.close(s, Exit.void), { discard: true }))
            )
          }
        }
        if (!uris.has(uri)) {
          const scope = yield* Scope.make()
          uris.set(uri, scope)
          // Answered once the upstream took the subscription; its refusal is this request's, holding nothing.
          const taken = yield* Effect.exit(Scope.provide(subscribed(upstream, uri), scope))
          if (Exit.isFailure(taken)) {
            uris.delete(uri)
            yield* Scope.close(scope, Exit.void)
            return yield* Effect.failCause(taken.cause)
          }
        }
        return yield* next
      })
    const unsubscribe = (request: Middleware.Request, uri: string, next: Middleware.Next) =>
      Effect.suspend(() => {
        const uris = held.get(request.info.state)
        const scope = uris?.get(uri)
        if (scope === undefined) return next
        uris!.delete(uri)
        return Effect.andThen(Scope.close(scope, Exit.void), next)
      })
    // A listen stream holds its URIs for as long as it lasts; one the caller may not see is not followed, nor named
    // in the stream's acknowledgement under a policy (`seenBy`).
    const listen = (request: Middleware.Request, next: Middleware.Next) => {
      const params = request.params as { readonly notifications?: { readonly resourceSubscriptions?: unknown } }
      const uris = params?.notifications?.resourceSubscriptions
      if (!Array.isArray(uris) || uris.length === 0) return next
      if (new Set(uris).size > maxSubscriptions) return Effect.fail(tooManySubscriptions(maxSubscriptions))
      const policy = routes.policy
      const served =
        policy === undefined
          ? next
          : Effect.flatMap(CurrentRequest.CurrentRequest, (current) =>
              Effect.provideService(
                next,
                CurrentRequest.CurrentRequest,
                seenBy(current, host.catalog, policy, request.principal)
              )
            )
      return Effect.scoped(
        Effect.andThen(
          Effect.forEach(
            uris.filter((u): u is string => typeof u === "string"),
            (uri) =>
              Effect.flatMap(Effect.option(route(request, uri)), (upstream) =>
                upstream._tag === "None" ? Effect.void : subscribed(upstream.value, uri)
              ),
            { discard: true }
          ),
          served
        )
      )
    }
    return (request, next) => {
      switch (request.method) {
        case "resources/subscribe":
          return request.target === undefined ? next : subscribe(request, request.target, next)
        case "resources/unsubscribe":
          return request.target === undefined ? next : unsubscribe(request, request.target, next)
        case "subscriptions/listen":
          return listen(request, next)
        default:
          return next
      }
    }
  })
