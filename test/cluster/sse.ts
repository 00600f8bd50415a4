/**
 * Raw Streamable HTTP for the cluster tests that count notifications: POSTs
 * and GETs whose SSE bodies are read as they arrive, a 2025-11-25 session
 * opened by hand, and a 2026-07-28 stateless request.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

// biome-ignore lint/suspicious/noExplicitAny: JSON read by path in assertions
export type Json = any

/** An HTTP response whose body is read in the background until the scope closes. */
export interface Open {
  readonly status: number
  readonly headers: Headers
  /** The body read so far. */
  readonly text: () => string
  /** Whether the body ended (the server or the scope closed it). */
  readonly ended: () => boolean
  /** The JSON-RPC messages of the SSE body (or the JSON body) read so far. */
  readonly messages: () => ReadonlyArray<Json>
  /** How many of them are notifications of `method`. */
  readonly count: (method: string) => number
}

/** The JSON-RPC messages of a body: a JSON one (a message or a batch), or an SSE one's events. */
export const messagesOf = (text: string): Array<Json> => {
  const trimmed = text.trimStart()
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      const parsed = JSON.parse(trimmed) as Json
      return Array.isArray(parsed) ? parsed : [parsed]
    } catch {
      return []
    }
  }
  const out: Array<Json> = []
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue
    const data = line.slice(5).trim()
    if (data === "") continue
    try {
      out.push(JSON.parse(data))
    } catch {
      // A partial line: read again once the rest arrives.
    }
  }
  return out
}

/** Sends a request and keeps reading its body until the scope closes. */
export const open = (
  url: string,
  init: { readonly method: string; readonly headers: Record<string, string>; readonly body?: object }
): Effect.Effect<Open, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const abort = new AbortController()
      const response = await fetch(url, {
        method: init.method,
        headers: {
          accept: "application/json, text/event-stream",
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
          ...init.headers
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal: abort.signal
      })
      let text = ""
      let ended = false
      const decoder = new TextDecoder()
      void (async () => {
        try {
          for await (const chunk of response.body ?? []) {
            text += decoder.decode(chunk as Uint8Array, { stream: true })
            progressed()
          }
        } catch {
          // Aborted when the scope closed.
        }
        ended = true
        progressed()
      })()
      const opened: Open = {
        status: response.status,
        headers: response.headers,
        text: () => text,
        ended: () => ended,
        messages: () => messagesOf(text),
        count: (method) => messagesOf(text).filter((message) => message.method === method).length
      }
      return { opened, abort }
    }),
    ({ abort }) => Effect.sync(() => abort.abort())
  ).pipe(Effect.map(({ opened }) => opened))

/** The conditions `until` is waiting on, checked again each time something a test reads arrives. */
const waiting = new Set<() => void>()

/**
 * Says that something a condition of `until` may read has changed (a chunk of a
 * body read here, a hop of the forwarder, a notification a client received):
 * every waiting condition is checked again.
 */
export const progressed = (): void => {
  for (const check of [...waiting]) check()
}

/**
 * Waits until `condition` holds, checked now and on every `progressed`; dies
 * after `timeoutMs` (a bound that only fires when the behaviour is broken).
 */
export const until = (condition: () => boolean, what: string, timeoutMs = 20_000, seen?: () => unknown) =>
  Effect.callback<void>((resume) => {
    let done = false
    const check = () => {
      if (done || !condition()) return
      done = true
      waiting.delete(check)
      resume(Effect.void)
    }
    waiting.add(check)
    check()
    return Effect.sync(() => waiting.delete(check))
  }).pipe(
    Effect.timeoutOption(`${timeoutMs} millis`),
    Effect.flatMap((done) =>
      done._tag === "Some"
        ? Effect.void
        : Effect.die(
            new Error(`timed out waiting: ${what}${seen === undefined ? "" : `; saw ${JSON.stringify(seen())}`}`)
          )
    )
  )

/** The response of a request: the first message with its id, once it arrived. */
export const answer = (opened: Open, id: number | string) =>
  Effect.andThen(
    until(() => opened.messages().some((message) => message.id === id), `the answer to request ${id}`),
    Effect.sync(() => opened.messages().find((message) => message.id === id) as Json)
  )

/** A 2025-11-25 session opened by hand; `headers` go on every request (a token, say). */
export interface Session {
  readonly id: string
  readonly headers: Record<string, string>
  /** Sends a request to `url` (any runner) and waits for its answer. */
  readonly request: (url: string, method: string, params: object) => Effect.Effect<Json, never, Scope.Scope>
  /** Opens the session's GET stream on `url`. */
  readonly stream: (url: string) => Effect.Effect<Open, never, Scope.Scope>
  /**
   * The session's GET stream on `url`, followed as a client follows it: when
   * the server ends it (its owner let the session go: a runner whose lock
   * storage stopped answering), it is opened again at once with
   * `Last-Event-ID`, and what it replays joins what came before; until a
   * reopen is refused.
   */
  readonly follow: (url: string) => Effect.Effect<Open, never, Scope.Scope>
}

/** The id of the last SSE event in `text` that carried one. */
const lastEventId = (text: string): string | undefined => {
  const ids = text.split("\n").filter((line) => line.startsWith("id:"))
  return ids.length === 0 ? undefined : ids[ids.length - 1]!.slice(3).trim()
}

/** Times a followed stream is opened again at most: a bound that only fires when the behaviour is broken. */
const MAX_REOPENS = 50

const following = (
  reopen: (lastId: string | undefined) => Effect.Effect<Open, never, Scope.Scope>
): Effect.Effect<Open, never, Scope.Scope> =>
  Effect.gen(function* () {
    const first = yield* reopen(undefined)
    let before = ""
    let current = first
    const text = () => before + current.text()
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        for (let n = 0; n < MAX_REOPENS; n++) {
          yield* until(() => current.ended(), "the GET stream to end", 600_000)
          before += current.text()
          // A reopen waits at the runner until the session can be served again (its owner is located), so one
          // that was refused is final: the stream is followed no further, and a test waiting on it says so.
          if (current.status !== 200) return
          current = yield* reopen(lastEventId(before))
        }
      })
    )
    return {
      status: first.status,
      headers: first.headers,
      text,
      ended: () => false,
      messages: () => messagesOf(text()),
      count: (method) => messagesOf(text()).filter((message) => message.method === method).length
    } satisfies Open
  })

/** Initializes a 2025-11-25 session at `url`. */
export const session = (
  url: string,
  headers: Record<string, string> = {}
): Effect.Effect<Session, never, Scope.Scope> =>
  Effect.gen(function* () {
    const init = yield* open(url, {
      method: "POST",
      headers,
      body: {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cluster-test", version: "1" } }
      }
    })
    yield* answer(init, 0)
    const id = init.headers.get("mcp-session-id")!
    const sessionHeaders = { ...headers, "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" }
    yield* open(url, {
      method: "POST",
      headers: sessionHeaders,
      body: { jsonrpc: "2.0", method: "notifications/initialized" }
    })
    let next = 1
    return {
      id,
      headers: sessionHeaders,
      request: (at, method, params) =>
        Effect.gen(function* () {
          const requestId = next++
          const opened = yield* open(at, {
            method: "POST",
            headers: sessionHeaders,
            body: { jsonrpc: "2.0", id: requestId, method, params }
          })
          return yield* answer(opened, requestId)
        }),
      stream: (at) => open(at, { method: "GET", headers: { ...sessionHeaders, accept: "text/event-stream" } }),
      follow: (at) =>
        following((lastId) =>
          open(at, {
            method: "GET",
            headers: {
              ...sessionHeaders,
              accept: "text/event-stream",
              ...(lastId === undefined ? {} : { "last-event-id": lastId })
            }
          })
        )
    }
  })

/** Opens a 2026-07-28 stateless request at `url` (its reply read until the scope closes). */
export const stateless = (
  url: string,
  method: string,
  params: object,
  headers: Record<string, string> = {}
): Effect.Effect<Open, never, Scope.Scope> =>
  open(url, {
    method: "POST",
    headers: { ...headers, "mcp-protocol-version": "2026-07-28", "mcp-method": method },
    body: {
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "cluster-test", version: "1" }
        }
      }
    }
  })
