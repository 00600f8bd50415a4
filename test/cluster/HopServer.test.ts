/**
 * The owner's side of the direct hop (packages/cluster internal/hopServer.ts)
 * on loopback, driven by raw frames: a connection must open with the owner's
 * secret, which the listener answers with its welcome, before anything is served; a request is served by the handler as an
 * HTTP request would be (method, path, headers, body) and answered whole or,
 * an event stream, chunk by chunk; a JSON body sent headers first comes back
 * whole; a connection that closes mid-exchange interrupts it; a frame above
 * the limit, or a second request before the first was answered, closes the
 * connection.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import { connect, type Socket } from "node:net"
import * as HopServer from "../../packages/cluster/src/internal/hopServer.ts"
import * as Wire from "../../packages/cluster/src/internal/hopWire.ts"

const SECRET = "the-owners-secret"

/** A listener on 127.0.0.1 serving with `handler`; closed with the scope. */
const listener = (handler: HopServer.Serve["handler"]) =>
  Effect.acquireRelease(HopServer.listen("127.0.0.1", SECRET), (server) => Effect.sync(server.close)).pipe(
    Effect.tap((server) =>
      Effect.flatMap(Effect.context<never>(), (context) =>
        Effect.sync(() => server.serve({ handler, runFork: Effect.runForkWith(context) }))
      )
    )
  )

interface Peer {
  readonly socket: Socket
  /** The frames received so far, but the welcome. */
  readonly frames: Array<Wire.Frame>
  /** Whether the listener welcomed the connection (took its secret). */
  readonly welcomed: () => boolean
  /** Resolves once `count` frames came, or the connection closed (then with what came). */
  readonly next: (count: number) => Effect.Effect<ReadonlyArray<Wire.Frame>>
  readonly closed: Effect.Effect<void>
}

/** A raw connection to `port`; closed with the scope. */
const peer = (port: number) =>
  Effect.acquireRelease(
    Effect.callback<Peer>((resume) => {
      const socket = connect(port, "127.0.0.1")
      const frames: Array<Wire.Frame> = []
      let wake: (() => void) | undefined
      let ended = false
      let welcomed = false
      const closed = Deferred.makeUnsafe<void>()
      socket.on("error", () => {})
      socket.on(
        "data",
        Wire.reader(
          (frame) => {
            if (frame.kind === Wire.Kind.Welcome && !welcomed && frames.length === 0) welcomed = true
            else frames.push(frame)
            wake?.()
          },
          () => socket.destroy()
        )
      )
      socket.on("close", () => {
        ended = true
        wake?.()
        Deferred.doneUnsafe(closed, Effect.void)
      })
      const next = (count: number) =>
        Effect.callback<ReadonlyArray<Wire.Frame>>((done) => {
          const check = () => {
            if (frames.length >= count || ended) done(Effect.succeed(frames.slice()))
          }
          wake = check
          check()
        })
      socket.once("connect", () =>
        resume(Effect.succeed({ socket, frames, welcomed: () => welcomed, next, closed: Deferred.await(closed) }))
      )
    }),
    ({ socket }) => Effect.sync(() => socket.destroy())
  )

const hello = (secret = SECRET) => Wire.frame(Wire.Kind.Hello, secret)
const request = (body = '{"jsonrpc":"2.0","id":1,"method":"ping"}') =>
  Wire.request(
    { method: "POST", url: "/mcp?x=1", headers: { "content-type": "application/json", "mcp-session-id": "s1" } },
    body
  )

describe("the direct hop's listener", () => {
  it.live("serves a request from a connection that opened with the secret, as the endpoint would", () =>
    Effect.gen(function* () {
      const seen: Array<{ method: string; url: string; session: string | undefined; body: string }> = []
      const server = yield* listener((incoming) =>
        Effect.gen(function* () {
          const body = yield* Effect.orDie(incoming.text)
          seen.push({ method: incoming.method, url: incoming.url, session: incoming.headers["mcp-session-id"], body })
          return HttpServerResponse.text('{"jsonrpc":"2.0","id":1,"result":{}}', {
            contentType: "application/json",
            headers: { "mcp-session-id": "s1" }
          })
        })
      )
      const client = yield* peer(server.port)
      client.socket.write(Buffer.concat([hello(), request()]))
      const [head] = yield* client.next(1)
      assert.isTrue(client.welcomed())
      assert.strictEqual(head?.kind, Wire.Kind.Head)
      const reply = Wire.readReply(head!.payload)
      assert.deepStrictEqual(reply.head, {
        status: 200,
        headers: { "mcp-session-id": "s1" },
        contentType: "application/json",
        streamed: false
      })
      assert.strictEqual(reply.body.toString("utf8"), '{"jsonrpc":"2.0","id":1,"result":{}}')
      assert.deepStrictEqual(seen, [
        { method: "POST", url: "/mcp?x=1", session: "s1", body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }
      ])
      // The connection serves the next exchange.
      client.socket.write(request())
      assert.strictEqual((yield* client.next(2)).length, 2)
      assert.strictEqual(seen.length, 2)
    }).pipe(Effect.scoped)
  )

  it.live("a connection without the secret is closed before anything is served", () =>
    Effect.gen(function* () {
      let served = 0
      const server = yield* listener(() =>
        Effect.sync(() => {
          served++
          return HttpServerResponse.empty()
        })
      )
      for (const opening of [hello("a-guess"), request()]) {
        const client = yield* peer(server.port)
        client.socket.write(Buffer.concat([opening, request()]))
        yield* client.closed
        assert.isFalse(client.welcomed())
        assert.strictEqual(client.frames.length, 0)
      }
      assert.strictEqual(served, 0)
    }).pipe(Effect.scoped)
  )

  it.live("an event stream is relayed chunk by chunk; a JSON body sent headers first comes back whole", () =>
    Effect.gen(function* () {
      const server = yield* listener((incoming) =>
        Effect.succeed(
          HttpServerResponse.stream(Stream.encodeText(Stream.make("a", "b")), {
            contentType: incoming.url === "/sse" ? "text/event-stream" : "application/json"
          })
        )
      )
      const client = yield* peer(server.port)
      const at = (url: string) => Wire.request({ method: "POST", url, headers: {} }, "{}")
      client.socket.write(Buffer.concat([hello(), at("/sse")]))
      const streamed = yield* client.next(4)
      assert.deepStrictEqual(
        streamed.map((frame) => frame.kind),
        [Wire.Kind.Head, Wire.Kind.Chunk, Wire.Kind.Chunk, Wire.Kind.End]
      )
      assert.isTrue(Wire.readReply(streamed[0]!.payload).head.streamed)
      assert.strictEqual(streamed[1]!.payload.toString() + streamed[2]!.payload.toString(), "ab")
      client.socket.write(at("/json"))
      const [whole] = (yield* client.next(5)).slice(4)
      const reply = Wire.readReply(whole!.payload)
      assert.isFalse(reply.head.streamed)
      assert.strictEqual(reply.body.toString(), "ab")
    }).pipe(Effect.scoped)
  )

  it.live("a connection closed mid-exchange interrupts it", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const server = yield* listener(() =>
        Deferred.succeed(started, undefined).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
        )
      )
      const client = yield* peer(server.port)
      client.socket.write(Buffer.concat([hello(), request()]))
      yield* Deferred.await(started)
      client.socket.destroy()
      yield* Deferred.await(interrupted)
    }).pipe(Effect.scoped)
  )

  it.live("a frame above the limit, or a second request before the first was answered, closes the connection", () =>
    Effect.gen(function* () {
      const server = yield* listener(() => Effect.never)
      const huge = Buffer.alloc(5)
      huge.writeUInt32BE(Wire.MAX_FRAME_BYTES + 1, 0)
      huge[4] = Wire.Kind.Request
      const first = yield* peer(server.port)
      first.socket.write(Buffer.concat([hello(), huge]))
      yield* first.closed
      const second = yield* peer(server.port)
      second.socket.write(Buffer.concat([hello(), request(), request()]))
      yield* second.closed
      assert.strictEqual(second.frames.length, 0)
    }).pipe(Effect.scoped)
  )

  it.live("a request frame that is not one closes its connection; the listener keeps serving", () =>
    Effect.gen(function* () {
      const server = yield* listener(() => Effect.succeed(HttpServerResponse.empty({ status: 202 })))
      const garbled = Buffer.from("not a head at all")
      const frame = Buffer.alloc(9)
      frame.writeUInt32BE(5 + garbled.length, 0)
      frame[4] = Wire.Kind.Request
      frame.writeUInt32BE(garbled.length, 5)
      const bad = yield* peer(server.port)
      bad.socket.write(Buffer.concat([hello(), frame, garbled]))
      yield* bad.closed
      assert.strictEqual(bad.frames.length, 0)
      const good = yield* peer(server.port)
      good.socket.write(Buffer.concat([hello(), request()]))
      const [head] = yield* good.next(1)
      assert.strictEqual(Wire.readReply(head!.payload).head.status, 202)
    }).pipe(Effect.scoped)
  )
})
