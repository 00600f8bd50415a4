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
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import type * as McpError from "@effect-mcp/protocol/McpError"
import type * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Impl from "./internal/testPeerImpl.ts"

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
  /**
   * Whether `settle` (and `expectNothing` without `within`) sends a `ping`
   * to the code under test and waits for its answer. Default true, for code
   * that answers requests (an MCP server or client, a `Peer`); pass false
   * when the code under test is a bare transport that reads no requests,
   * and `settle` then only waits for the frames it already sent.
   */
  readonly ping?: boolean | undefined
  /**
   * @deprecated Ignored: `settle` no longer counts scheduler turns, it waits
   * for a ping round trip (see `ping`).
   */
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
   * advances the TestClock), otherwise after `settle`. Either way every frame
   * the code under test's `send` had accepted by then is looked at.
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
  /**
   * A barrier, without moving the clock: sends a `ping` (unless `ping: false`)
   * and waits for the answer, which the code under test sends after everything
   * it sent before reading the ping; then waits until every frame its `send`
   * accepted has arrived here. The answer is neither pending nor recorded.
   * Work the code under test does apart from its reading of requests (a
   * forked handler, a timer) is not covered: wait for its message instead.
   * Dies if no answer comes within the default timeout of Clock time.
   */
  readonly settle: Effect.Effect<void>
  /** Closes the peer's end: the code under test sees end-of-stream. */
  readonly close: Effect.Effect<void>
}

/** Describes a received frame for failure messages. */
export const describeFrame: (frame: Transport.Incoming) => string = Impl.describeFrame

const fail: Impl.Fail = (reason, message) => new TestPeerError({ reason, message })

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
export const make = (options?: Options): Effect.Effect<TestPeer, never, Scope.Scope> => Impl.make(options, fail)
