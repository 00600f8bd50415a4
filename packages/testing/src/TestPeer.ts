/**
 * A scripted raw JSON-RPC peer for protocol-level tests of either role. The
 * code under test gets one end of a memory pair as its `Transport`; the test
 * drives the other end frame by frame: send this, expect that, answer with
 * this. Raw text (malformed JSON included) goes through the real codec, so
 * the code under test sees the same `Result.fail` frames a text transport
 * would deliver.
 *
 * Waiting is bounded by Clock time: under `it.effect` a missing frame fails
 * an expectation only when the TestClock passes the timeout, so a test that
 * wants to observe a timeout forks the expectation and adjusts the clock.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Inbox from "./internal/inbox.ts"
import * as Match from "./internal/match.ts"
import * as RawFrame from "./internal/rawFrame.ts"

/** An expectation of a TestPeer failed. */
export class TestPeerError extends Schema.TaggedError<TestPeerError>()("TestPeerError", {
  /**
   * `Timeout`: nothing suitable arrived in time; `Mismatch`: the next frame was
   * not the expected one; `Closed`: the other side closed first; `Unexpected`:
   * a frame arrived where none was expected.
   */
  reason: Schema.Literals(["Timeout", "Mismatch", "Closed", "Unexpected"]),
  message: Schema.String
}) {}

/** Settings of a TestPeer. */
export interface Options {
  /** Frames cross as JSON text in both directions (the full codec path). Default false. */
  readonly codec?: boolean | undefined
  /** Frames buffered per direction before `send` suspends. Default 1024. */
  readonly capacity?: number | undefined
  /** Default timeout of expectations, in Clock time. Default 5 seconds. */
  readonly timeout?: Duration.Input | undefined
  /** Received messages the peer records but never expects (e.g. log notifications). */
  readonly ignore?: ((message: JsonRpc.Message) => boolean) | undefined
  /** Scheduler turns `settle` and `expectNothing` give the code under test. Default 64. */
  readonly settleTurns?: number | undefined
}

/** How long and where an expectation looks. */
export interface ExpectOptions {
  readonly timeout?: Duration.Input | undefined
  /**
   * `true` (default): the next pending frame must match. `false`: take the
   * first pending frame that matches; the others stay pending for later.
   */
  readonly inOrder?: boolean | undefined
}

/**
 * A partial message: listed members must match (deeply, objects partially),
 * the rest is free. A member set to `undefined` must be absent.
 */
export interface MessagePattern {
  readonly jsonrpc?: "2.0"
  readonly id?: JsonRpc.RequestId | null
  readonly method?: string
  readonly params?: unknown
  readonly result?: unknown
  readonly error?: { readonly code?: number; readonly message?: string; readonly data?: unknown } | undefined
}

/** A pattern or a predicate a message must satisfy. */
export type MessageMatch = MessagePattern | ((message: JsonRpc.Message) => boolean)

/** What the TestPeer sends in its `initialize` (acting as a client). */
export interface InitializeOptions {
  readonly protocolVersion?: string | undefined
  readonly capabilities?: object | undefined
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  readonly timeout?: Duration.Input | undefined
}

/** How the TestPeer answers an `initialize` (acting as a server). */
export interface AcceptInitializeOptions {
  /** The version to answer with. Default: the one the client offered. */
  readonly protocolVersion?: string | undefined
  readonly capabilities?: object | undefined
  readonly serverInfo?: { readonly name: string; readonly version: string } | undefined
  readonly instructions?: string | undefined
  readonly timeout?: Duration.Input | undefined
}

/** A scripted raw JSON-RPC peer: the code under test gets `transport`, the test sends and expects frames. */
export interface TestPeer {
  /** The end for the code under test. */
  readonly transport: MemoryTransport.End
  /** Provides `transport` as the `Transport`; releasing the layer closes it. */
  readonly layer: Layer.Layer<Transport.Transport>

  /** Sends a frame; a string is sent as raw text and decoded by the real codec on arrival. */
  readonly send: (
    frame: Transport.Outgoing | string,
    options?: Transport.SendOptions
  ) => Effect.Effect<void, Transport.TransportError>
  /** Sends a request with the next free id (or `options.id`) and returns it. */
  readonly request: (
    method: string,
    params?: JsonRpc.Params | undefined,
    options?: { readonly id?: JsonRpc.RequestId | undefined }
  ) => Effect.Effect<JsonRpc.Request, Transport.TransportError>
  /** Sends a notification. */
  readonly notify: (
    method: string,
    params?: JsonRpc.Params | undefined
  ) => Effect.Effect<void, Transport.TransportError>
  /** Answers `to` (a received request or its id) with a result. */
  readonly respond: (
    to: JsonRpc.Request | JsonRpc.RequestId,
    result: unknown
  ) => Effect.Effect<void, Transport.TransportError>
  /** Answers `to` with an error. */
  readonly respondError: (
    to: JsonRpc.Request | JsonRpc.RequestId | null,
    error: McpError.McpError | JsonRpc.ErrorObject
  ) => Effect.Effect<void, Transport.TransportError>
  /** Sends a request and waits for its response, leaving other frames pending. */
  readonly call: (
    method: string,
    params?: JsonRpc.Params | undefined,
    options?: ExpectOptions & { readonly id?: JsonRpc.RequestId | undefined }
  ) => Effect.Effect<JsonRpc.Response, TestPeerError | Transport.TransportError>

  /** Takes the next message (see `ExpectOptions.inOrder`) if it matches. */
  readonly expect: (match: MessageMatch, options?: ExpectOptions) => Effect.Effect<JsonRpc.Message, TestPeerError>
  /** Takes the next request for `method` matching `match`. */
  readonly expectRequest: (
    method: string,
    match?: MessagePattern,
    options?: ExpectOptions
  ) => Effect.Effect<JsonRpc.Request, TestPeerError>
  /** Takes the next notification for `method` matching `match`. */
  readonly expectNotification: (
    method: string,
    match?: MessagePattern,
    options?: ExpectOptions
  ) => Effect.Effect<JsonRpc.Notification, TestPeerError>
  /** Takes the response to `id` if it matches. */
  readonly expectResponse: (
    id: JsonRpc.RequestId | null,
    match?: MessagePattern,
    options?: ExpectOptions
  ) => Effect.Effect<JsonRpc.Response, TestPeerError>
  /** Takes the next batch if it matches. */
  readonly expectBatch: (
    match?: (batch: JsonRpcCodec.DecodedBatch) => boolean,
    options?: ExpectOptions
  ) => Effect.Effect<JsonRpcCodec.DecodedBatch, TestPeerError>
  /** The most general expectation: any frame, undecodable ones included. */
  readonly expectFrame: (
    match: (frame: Transport.Incoming) => boolean,
    options?: ExpectOptions
  ) => Effect.Effect<Transport.Incoming, TestPeerError>
  /**
   * Fails with `Unexpected` if a frame is pending once the code under test
   * has had its turn: after `within` of Clock time if given (the test
   * advances the TestClock), otherwise after `settle`.
   */
  readonly expectNothing: (options?: {
    readonly within?: Duration.Input | undefined
  }) => Effect.Effect<void, TestPeerError>
  /** Waits until the code under test closes its end. */
  readonly expectClosed: (options?: {
    readonly timeout?: Duration.Input | undefined
  }) => Effect.Effect<void, TestPeerError>

  /** Acts as a client: `initialize`, then `notifications/initialized`. Returns the result. */
  readonly initialize: (options?: InitializeOptions) => Effect.Effect<unknown, TestPeerError | Transport.TransportError>
  /**
   * Acts as a server of a stateful revision: answers a `server/discover`
   * probe with method-not-found, `initialize` with `options`, then expects
   * `notifications/initialized`. Returns the `initialize` request.
   */
  readonly acceptInitialize: (
    options?: AcceptInitializeOptions
  ) => Effect.Effect<JsonRpc.Request, TestPeerError | Transport.TransportError>

  /** Every frame received so far, consumed or not. */
  readonly received: Effect.Effect<ReadonlyArray<Transport.Incoming>>
  /** Every decodable message received so far (batch entries flattened). */
  readonly messages: Effect.Effect<ReadonlyArray<JsonRpc.Message>>
  /** Frames no expectation has taken yet. */
  readonly pending: Effect.Effect<ReadonlyArray<Transport.Incoming>>
  /** Gives the code under test scheduler turns to react, without moving the clock. */
  readonly settle: Effect.Effect<void>
  /** Closes the peer's end: the code under test sees end-of-stream. */
  readonly close: Effect.Effect<void>
}

const defaultInfo = { name: "effect-mcp-test-peer", version: "0.0.0" }
const defaultClientVersion = "2025-11-25"

type Outcome<B> =
  | { readonly _tag: "Found"; readonly value: B }
  | { readonly _tag: "Mismatch"; readonly frame: Transport.Incoming }

/** Describes a received frame for failure messages. */
export const describeFrame = (frame: Transport.Incoming): string =>
  Result.isSuccess(frame)
    ? Match.describe(frame.success)
    : `<undecodable frame: ${frame.failure.reason}: ${frame.failure.message}>`

const asMessage = (frame: Transport.Incoming): JsonRpc.Message | undefined =>
  Result.isSuccess(frame) && !JsonRpcCodec.isBatch(frame.success) ? frame.success : undefined

const messageMatches = (match: MessageMatch | undefined, message: JsonRpc.Message): boolean =>
  match === undefined ? true : Predicate.isFunction(match) ? match(message) : Match.matches(match, message)

const yieldTurns = (turns: number): Effect.Effect<void> =>
  turns <= 0
    ? Effect.void
    : Effect.andThen(
        Effect.yieldNow,
        Effect.suspend(() => yieldTurns(turns - 1))
      )

/**
 * Makes a test peer. Closing the scope closes both ends.
 *
 * @example
 * ```ts
 * import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
 * import * as Transport from "@effect-mcp/engine/Transport"
 * import * as McpServer from "@effect-mcp/server/McpServer"
 * import * as TestPeer from "@effect-mcp/testing/TestPeer"
 * import * as Effect from "effect/Effect"
 *
 * const Server = McpServer.layer({ name: "under-test", version: "1.0.0" })
 *
 * // The server under test talks to a scripted client that sends and checks raw JSON-RPC.
 * export const check = Effect.gen(function* () {
 *   const peer = yield* TestPeer.make()
 *   yield* McpServer.serve.pipe(
 *     Effect.provideService(Transport.Transport, peer.transport),
 *     Effect.provide(Server),
 *     Effect.forkScoped
 *   )
 *   yield* peer.initialize({ protocolVersion: "2025-06-18" })
 *   const response = yield* peer.call("tools/list", {})
 *   return JsonRpc.isFailure(response) ? response.error.code : "ok"
 * }).pipe(Effect.scoped)
 * ```
 */
export const make = Effect.fnUntraced(function* (options?: Options): Effect.fn.Return<TestPeer, never, Scope.Scope> {
  const codec = options?.codec === true
  const defaultTimeout = options?.timeout ?? Duration.seconds(5)
  const turns = options?.settleTurns ?? 64
  const ignore = options?.ignore
  const [mine, theirs] = yield* MemoryTransport.makePair({ capacity: options?.capacity })

  const encoding = (end: MemoryTransport.End) => (frame: Transport.Outgoing, sendOptions?: Transport.SendOptions) =>
    codec
      ? Effect.flatMap(RawFrame.encode(frame), (wrapped) => end.send(wrapped, sendOptions))
      : end.send(frame, sendOptions)

  const transport: MemoryTransport.End = {
    incoming: Stream.map(theirs.incoming, RawFrame.unwrap),
    send: encoding(theirs),
    close: theirs.close
  }

  const inbox = yield* Inbox.make(Stream.map(mine.incoming, RawFrame.unwrap), (frame) => {
    if (ignore === undefined) return true
    const message = asMessage(frame)
    return message === undefined || !ignore(message)
  })

  const sendOwn = encoding(mine)
  const send = (frame: Transport.Outgoing | string, sendOptions?: Transport.SendOptions) =>
    typeof frame === "string" ? mine.send(RawFrame.wrap(frame), sendOptions) : sendOwn(frame, sendOptions)

  let nextId = 1
  const request = (
    method: string,
    params?: JsonRpc.Params,
    requestOptions?: { readonly id?: JsonRpc.RequestId | undefined }
  ) =>
    Effect.suspend(() => {
      const message = JsonRpc.request(requestOptions?.id ?? nextId++, method, params)
      return Effect.as(send(message), message)
    })

  const notify = (method: string, params?: JsonRpc.Params) => send(JsonRpc.notification(method, params))

  const idOf = <I extends JsonRpc.RequestId | null>(to: JsonRpc.Request | I): JsonRpc.RequestId | I =>
    to === null || typeof to !== "object" ? to : to.id

  const pendingDescription = () =>
    inbox.pending.length === 0 ? "nothing pending" : `pending: ${inbox.pending.map(describeFrame).join(", ")}`

  const expectWith = <B>(
    what: string,
    select: (frame: Transport.Incoming) => B | undefined,
    expectOptions: ExpectOptions | undefined
  ): Effect.Effect<B, TestPeerError> => {
    const inOrder = expectOptions?.inOrder ?? true
    const check = (): Outcome<B> | undefined => {
      const pending = inbox.pending
      if (inOrder) {
        const first = pending[0]
        if (first === undefined) return undefined
        const value = select(first)
        if (value === undefined) return { _tag: "Mismatch", frame: first }
        pending.shift()
        return { _tag: "Found", value }
      }
      for (let i = 0; i < pending.length; i++) {
        const value = select(pending[i]!)
        if (value !== undefined) {
          pending.splice(i, 1)
          return { _tag: "Found", value }
        }
      }
      return undefined
    }
    const timeout = expectOptions?.timeout ?? defaultTimeout
    return inbox.waitFor(check).pipe(
      Effect.timeoutOption(timeout),
      Effect.flatMap((outcome) => {
        if (Option.isNone(outcome)) {
          return Effect.fail(
            new TestPeerError({
              reason: "Timeout",
              message: `expected ${what} within ${Duration.format(Duration.fromInputUnsafe(timeout))}; ${pendingDescription()}`
            })
          )
        }
        const value = outcome.value
        if (value === undefined) {
          return Effect.fail(
            new TestPeerError({
              reason: "Closed",
              message: `expected ${what}, but the other side closed; ${pendingDescription()}`
            })
          )
        }
        if (value._tag === "Mismatch") {
          return Effect.fail(
            new TestPeerError({
              reason: "Mismatch",
              message: `expected ${what}, received ${describeFrame(value.frame)}`
            })
          )
        }
        return Effect.succeed(value.value)
      })
    )
  }

  const expect = (match: MessageMatch, expectOptions?: ExpectOptions) =>
    expectWith(
      Predicate.isFunction(match) ? "a message matching the predicate" : Match.describe(match),
      (frame) => {
        const message = asMessage(frame)
        return message !== undefined && messageMatches(match, message) ? message : undefined
      },
      expectOptions
    )

  const expectRequest = (method: string, match?: MessagePattern, expectOptions?: ExpectOptions) =>
    expectWith(
      `request ${method}${match === undefined ? "" : ` matching ${Match.describe(match)}`}`,
      (frame) => {
        const message = asMessage(frame)
        return message !== undefined &&
          JsonRpc.isRequest(message) &&
          message.method === method &&
          messageMatches(match, message)
          ? message
          : undefined
      },
      expectOptions
    )

  const expectNotification = (method: string, match?: MessagePattern, expectOptions?: ExpectOptions) =>
    expectWith(
      `notification ${method}${match === undefined ? "" : ` matching ${Match.describe(match)}`}`,
      (frame) => {
        const message = asMessage(frame)
        return message !== undefined &&
          JsonRpc.isNotification(message) &&
          message.method === method &&
          messageMatches(match, message)
          ? message
          : undefined
      },
      expectOptions
    )

  const expectResponse = (id: JsonRpc.RequestId | null, match?: MessagePattern, expectOptions?: ExpectOptions) =>
    expectWith(
      `response to ${String(id)}${match === undefined ? "" : ` matching ${Match.describe(match)}`}`,
      (frame) => {
        const message = asMessage(frame)
        return message !== undefined &&
          JsonRpc.isResponse(message) &&
          message.id === id &&
          messageMatches(match, message)
          ? message
          : undefined
      },
      expectOptions
    )

  const expectBatch = (match?: (batch: JsonRpcCodec.DecodedBatch) => boolean, expectOptions?: ExpectOptions) =>
    expectWith(
      "a batch",
      (frame) =>
        Result.isSuccess(frame) && JsonRpcCodec.isBatch(frame.success) && (match === undefined || match(frame.success))
          ? frame.success
          : undefined,
      expectOptions
    )

  const expectFrame = (match: (frame: Transport.Incoming) => boolean, expectOptions?: ExpectOptions) =>
    expectWith("a frame matching the predicate", (frame) => (match(frame) ? frame : undefined), expectOptions)

  const settle = yieldTurns(turns)

  const expectNothing = (nothingOptions?: { readonly within?: Duration.Input | undefined }) =>
    Effect.andThen(
      nothingOptions?.within === undefined ? settle : Effect.sleep(nothingOptions.within),
      Effect.suspend(() =>
        inbox.pending.length === 0
          ? Effect.void
          : Effect.fail(
              new TestPeerError({ reason: "Unexpected", message: `expected nothing; ${pendingDescription()}` })
            )
      )
    )

  const expectClosed = (closedOptions?: { readonly timeout?: Duration.Input | undefined }) => {
    const timeout = closedOptions?.timeout ?? defaultTimeout
    return inbox
      .waitFor(() => undefined)
      .pipe(
        Effect.timeoutOption(timeout),
        Effect.flatMap((outcome) =>
          Option.isSome(outcome)
            ? Effect.void
            : Effect.fail(
                new TestPeerError({
                  reason: "Timeout",
                  message: `expected the other side to close within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
                })
              )
        )
      )
  }

  const respond = (to: JsonRpc.Request | JsonRpc.RequestId, result: unknown) => send(JsonRpc.success(idOf(to), result))

  const respondError = (
    to: JsonRpc.Request | JsonRpc.RequestId | null,
    error: McpError.McpError | JsonRpc.ErrorObject
  ) => send(JsonRpc.failure(idOf(to), McpError.isMcpError(error) ? McpError.toErrorObject(error) : error))

  const call = (
    method: string,
    params?: JsonRpc.Params,
    callOptions?: ExpectOptions & { readonly id?: JsonRpc.RequestId | undefined }
  ) =>
    Effect.flatMap(request(method, params, { id: callOptions?.id }), (sent) =>
      expectResponse(sent.id, undefined, { timeout: callOptions?.timeout, inOrder: callOptions?.inOrder ?? false })
    )

  const initialize = (init?: InitializeOptions) =>
    Effect.gen(function* () {
      const response = yield* call(
        "initialize",
        {
          protocolVersion: init?.protocolVersion ?? defaultClientVersion,
          capabilities: init?.capabilities ?? {},
          clientInfo: init?.clientInfo ?? defaultInfo
        },
        { timeout: init?.timeout }
      )
      if (JsonRpc.isFailure(response)) {
        return yield* new TestPeerError({
          reason: "Mismatch",
          message: `initialize was refused: ${Match.describe(response.error)}`
        })
      }
      yield* notify("notifications/initialized")
      return (response as JsonRpc.SuccessResponse).result
    })

  const acceptInitialize = (accept?: AcceptInitializeOptions) =>
    Effect.gen(function* () {
      const expectOptions = { timeout: accept?.timeout }
      while (true) {
        const message = yield* expect(
          (m) => JsonRpc.isRequest(m) && (m.method === "initialize" || m.method === "server/discover"),
          expectOptions
        )
        const req = message as JsonRpc.Request
        if (req.method === "server/discover") {
          yield* respondError(req, new McpError.MethodNotFound({ message: "Method not found: server/discover" }))
          continue
        }
        const offered = Predicate.isObject(req.params) ? req.params.protocolVersion : undefined
        yield* respond(req, {
          protocolVersion: accept?.protocolVersion ?? offered,
          capabilities: accept?.capabilities ?? {},
          serverInfo: accept?.serverInfo ?? defaultInfo,
          ...(accept?.instructions === undefined ? {} : { instructions: accept.instructions })
        })
        yield* expectNotification("notifications/initialized", undefined, expectOptions)
        return req
      }
    })

  return {
    transport,
    layer: MemoryTransport.layer(transport),
    send,
    request,
    notify,
    respond,
    respondError,
    call,
    expect,
    expectRequest,
    expectNotification,
    expectResponse,
    expectBatch,
    expectFrame,
    expectNothing,
    expectClosed,
    initialize,
    acceptInitialize,
    received: Effect.sync(() => [...inbox.history]),
    messages: Effect.sync(() => {
      const out: Array<JsonRpc.Message> = []
      for (const frame of inbox.history) {
        if (Result.isFailure(frame)) continue
        if (!JsonRpcCodec.isBatch(frame.success)) out.push(frame.success)
        else for (const entry of frame.success) if (!JsonRpcCodec.isDecodeFailure(entry)) out.push(entry)
      }
      return out
    }),
    pending: Effect.sync(() => [...inbox.pending]),
    settle,
    close: mine.close
  } satisfies TestPeer
})
