/**
 * The TestPeer's implementation (its contract is in TestPeer.ts): a memory
 * pair whose far end is the code under test's transport, an inbox of what
 * that code sent, and expectations that wait for frames in it.
 */
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as JsonRpcCodec from "@effect-mcp/protocol/JsonRpcCodec"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as Transport from "@effect-mcp/engine/Transport"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as TestPeer from "../TestPeer.ts"
import * as Inbox from "./inbox.ts"
import * as Match from "./match.ts"
import * as RawFrame from "./rawFrame.ts"

/** Makes the error an expectation fails with (the class is TestPeer.ts's). */
export type Fail = (reason: TestPeer.TestPeerError["reason"], message: string) => TestPeer.TestPeerError

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

const messageMatches = (match: TestPeer.MessageMatch | undefined, message: JsonRpc.Message): boolean =>
  match === undefined ? true : Predicate.isFunction(match) ? match(message) : Match.matches(match, message)

export const make = Effect.fnUntraced(function* (
  options: TestPeer.Options | undefined,
  fail: Fail
): Effect.fn.Return<TestPeer.TestPeer, never, Scope.Scope> {
  const codec = options?.codec === true
  const defaultTimeout = options?.timeout ?? Duration.seconds(5)
  const ping = options?.ping ?? true
  const ignore = options?.ignore
  const [mine, theirs] = yield* MemoryTransport.makePair({ capacity: options?.capacity })

  // What the settle barrier watches: frames the code under test handed to its
  // transport (counted once `send` accepted them), frames that reached this end,
  // and the answers to the barrier's own pings (kept out of the inbox).
  let accepted = 0
  let arrived = 0
  const answered = new Set<JsonRpc.RequestId>()
  const barrierPrefix = "effect-mcp-test-peer/settle/"
  let nextBarrier = 1
  const isBarrierAnswer = (frame: Transport.Incoming): JsonRpc.RequestId | undefined => {
    const message = asMessage(frame)
    return message !== undefined &&
      JsonRpc.isResponse(message) &&
      typeof message.id === "string" &&
      message.id.startsWith(barrierPrefix)
      ? message.id
      : undefined
  }

  const encoding = (end: MemoryTransport.End) => (frame: Transport.Outgoing, sendOptions?: Transport.SendOptions) =>
    codec
      ? Effect.flatMap(RawFrame.encode(frame), (wrapped) => end.send(wrapped, sendOptions))
      : end.send(frame, sendOptions)

  const sendTheirs = encoding(theirs)
  const transport: MemoryTransport.End = {
    incoming: Stream.map(theirs.incoming, RawFrame.unwrap),
    send: (frame, sendOptions) =>
      Effect.andThen(
        sendTheirs(frame, sendOptions),
        Effect.sync(() => {
          accepted++
        })
      ),
    close: theirs.close
  }

  const inbox = yield* Inbox.make(
    Stream.map(mine.incoming, (frame) => {
      arrived++
      return RawFrame.unwrap(frame)
    }),
    (frame) => {
      if (ignore === undefined) return true
      const message = asMessage(frame)
      return message === undefined || !ignore(message)
    },
    (frame) => {
      const id = isBarrierAnswer(frame)
      if (id === undefined) return true
      answered.add(id)
      return false
    }
  )

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
    expectOptions: TestPeer.ExpectOptions | undefined
  ): Effect.Effect<B, TestPeer.TestPeerError> => {
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
            fail(
              "Timeout",
              `expected ${what} within ${Duration.format(Duration.fromInputUnsafe(timeout))}; ${pendingDescription()}`
            )
          )
        }
        const value = outcome.value
        if (value === undefined) {
          return Effect.fail(fail("Closed", `expected ${what}, but the other side closed; ${pendingDescription()}`))
        }
        if (value._tag === "Mismatch") {
          return Effect.fail(fail("Mismatch", `expected ${what}, received ${describeFrame(value.frame)}`))
        }
        return Effect.succeed(value.value)
      })
    )
  }

  const expect = (match: TestPeer.MessageMatch, expectOptions?: TestPeer.ExpectOptions) =>
    expectWith(
      Predicate.isFunction(match) ? "a message matching the predicate" : Match.describe(match),
      (frame) => {
        const message = asMessage(frame)
        return message !== undefined && messageMatches(match, message) ? message : undefined
      },
      expectOptions
    )

  const expectRequest = (method: string, match?: TestPeer.MessagePattern, expectOptions?: TestPeer.ExpectOptions) =>
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

  const expectNotification = (
    method: string,
    match?: TestPeer.MessagePattern,
    expectOptions?: TestPeer.ExpectOptions
  ) =>
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

  const expectResponse = (
    id: JsonRpc.RequestId | null,
    match?: TestPeer.MessagePattern,
    expectOptions?: TestPeer.ExpectOptions
  ) =>
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

  const expectBatch = (match?: (batch: JsonRpcCodec.DecodedBatch) => boolean, expectOptions?: TestPeer.ExpectOptions) =>
    expectWith(
      "a batch",
      (frame) =>
        Result.isSuccess(frame) && JsonRpcCodec.isBatch(frame.success) && (match === undefined || match(frame.success))
          ? frame.success
          : undefined,
      expectOptions
    )

  const expectFrame = (match: (frame: Transport.Incoming) => boolean, expectOptions?: TestPeer.ExpectOptions) =>
    expectWith("a frame matching the predicate", (frame) => (match(frame) ? frame : undefined), expectOptions)

  /** Waits until every frame the code under test's `send` accepted has reached this end (or it closed). */
  const arrival = inbox.waitFor(() => (arrived >= accepted ? true : undefined))

  /**
   * A ping round trip: the code under test answers after everything it sent
   * before reading the ping, and frames keep their order, so once the answer
   * is in, so is all of that. A closed end answers nothing and needs no wait.
   */
  const pingBarrier = Effect.suspend(() => {
    const id = `${barrierPrefix}${nextBarrier++}`
    return send(JsonRpc.request(id, "ping")).pipe(
      Effect.matchEffect({
        onFailure: () => Effect.void,
        onSuccess: () =>
          inbox
            .waitFor(() => (answered.has(id) ? true : undefined))
            .pipe(
              Effect.timeoutOption(defaultTimeout),
              Effect.flatMap((outcome) =>
                Option.isSome(outcome)
                  ? Effect.void
                  : Effect.die(
                      new Error(
                        `settle: the code under test did not answer the barrier ping within ${Duration.format(Duration.fromInputUnsafe(defaultTimeout))}; make the TestPeer with \`ping: false\` if it does not answer requests`
                      )
                    )
              )
            )
      })
    )
  })

  const settle = ping ? Effect.andThen(pingBarrier, arrival) : arrival

  const expectNothing = (nothingOptions?: { readonly within?: Duration.Input | undefined }) =>
    Effect.andThen(
      nothingOptions?.within === undefined ? settle : Effect.andThen(Effect.sleep(nothingOptions.within), arrival),
      Effect.suspend(() =>
        inbox.pending.length === 0
          ? Effect.void
          : Effect.fail(fail("Unexpected", `expected nothing; ${pendingDescription()}`))
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
                fail(
                  "Timeout",
                  `expected the other side to close within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
                )
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
    callOptions?: TestPeer.ExpectOptions & { readonly id?: JsonRpc.RequestId | undefined }
  ) =>
    Effect.flatMap(request(method, params, { id: callOptions?.id }), (sent) =>
      expectResponse(sent.id, undefined, { timeout: callOptions?.timeout, inOrder: callOptions?.inOrder ?? false })
    )

  const initialize = (init?: TestPeer.InitializeOptions) =>
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
        return yield* fail("Mismatch", `initialize was refused: ${Match.describe(response.error)}`)
      }
      yield* notify("notifications/initialized")
      return (response as JsonRpc.SuccessResponse).result
    })

  const acceptInitialize = (accept?: TestPeer.AcceptInitializeOptions) =>
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
  } satisfies TestPeer.TestPeer
})
