/**
 * W6, run in a child process of its own per measurement (so handlers that
 * never stop cannot disturb the next one): `cancel.ts <effect|sdk|floor>
 * <samples> <cancels>`. A `sleep` tool sleeps 10 s; each call is cancelled
 * 10 ms after it is sent. The server's transport stamps the arrival of each
 * `notifications/cancelled`, the handler stamps when it stops; then heap
 * growth (after a full collection) over `cancels` such calls, 50 at a time,
 * measured after a first `cancels` of them reached a steady state (code,
 * caches and table capacities grow once). The result goes back over IPC.
 */
import * as McpClient from "@effect-mcp/client/McpClient"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import * as Transport from "@effect-mcp/engine/Transport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Transport as SdkTransport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

const [impl, samplesArg, cancelsArg] = process.argv.slice(2) as ["effect" | "sdk" | "floor", string, string]
const samples = Number(samplesArg)
const cancels = Number(cancelsArg)
const sleepMs = 10_000
const cancelAfterMs = 10
const batch = 50

/** Arrival of each cancellation and stop of each handler, by request id. */
const arrived = new Map<JsonRpc.RequestId, number>()
const stopped = new Map<JsonRpc.RequestId, number>()
let running = 0

const cancelledId = (message: unknown): JsonRpc.RequestId | undefined => {
  const m = message as { readonly method?: unknown; readonly params?: { readonly requestId?: JsonRpc.RequestId } }
  return m.method === "notifications/cancelled" ? m.params?.requestId : undefined
}
// Off while memory is measured: the stamps would be growth of their own.
let recording = true
const stampArrival = (message: unknown) => {
  const id = cancelledId(message)
  if (id !== undefined && recording) arrived.set(id, performance.now())
}
const stampStop = (id: JsonRpc.RequestId) => {
  if (recording) stopped.set(id, performance.now())
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const heap = () => {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed
}

/** One cancelled call: sends it, cancels it after 10 ms. */
type CancelledCall = () => Promise<void>

const effectSetup = async (): Promise<CancelledCall> => {
  const sleepTool = Tool.make("sleep", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.gen(function* () {
        const request = yield* CurrentRequest.CurrentRequest
        running++
        yield* Effect.sleep(sleepMs).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              stampStop(request.id)
              running--
            })
          )
        )
        running--
        return "slept"
      })
  })
  const scope = Scope.makeUnsafe()
  const client = await Effect.runPromise(
    Effect.gen(function* () {
      const [clientEnd, serverEnd] = yield* MemoryTransport.makePair()
      const stamped: Transport.TransportShape = {
        incoming: Stream.map(serverEnd.incoming, (frame) => {
          if (Result.isSuccess(frame)) stampArrival(frame.success)
          return frame
        }),
        send: serverEnd.send
      }
      const context = yield* Layer.build(
        Tool.layer(sleepTool).pipe(Layer.provideMerge(McpServer.layer({ name: "s", version: "1" })))
      )
      yield* McpServer.makeSession.pipe(
        Effect.provideContext(context),
        Effect.provideService(Transport.Transport, stamped)
      )
      return yield* McpClient.make({ clientInfo: { name: "c", version: "1" }, supportedVersions: ["2025-11-25"] }).pipe(
        Effect.provideService(Transport.Transport, clientEnd)
      )
    }).pipe(Scope.provide(scope))
  )
  return () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(client.callTool("sleep", {}))
        yield* Effect.sleep(cancelAfterMs)
        yield* Fiber.interrupt(fiber)
      })
    )
}

/** Stamps arrivals on the SDK server's side of its in-memory pair. */
const stampingSdk = (inner: SdkTransport): SdkTransport => {
  const outer: SdkTransport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close()
  }
  Object.defineProperty(outer, "onmessage", {
    get: () => inner.onmessage,
    set: (handler: ((message: JSONRPCMessage, extra?: unknown) => void) | undefined) => {
      inner.onmessage =
        handler === undefined
          ? undefined
          : (message, extra) => {
              stampArrival(message)
              handler(message, extra as never)
            }
    }
  })
  Object.defineProperty(outer, "onclose", { set: (h) => (inner.onclose = h), get: () => inner.onclose })
  Object.defineProperty(outer, "onerror", { set: (h) => (inner.onerror = h), get: () => inner.onerror })
  return outer
}

const sdkSetup = async (): Promise<CancelledCall> => {
  const server = new SdkMcpServer({ name: "s", version: "1" })
  // A trivial tool, as the SDK's documentation writes them: it does not look at `extra.signal`.
  server.registerTool("sleep", { inputSchema: {} }, async (_args, extra) => {
    running++
    await wait(sleepMs)
    stampStop(extra.requestId)
    running--
    return { content: [{ type: "text", text: "slept" }] }
  })
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair()
  await server.connect(stampingSdk(serverEnd))
  const client = new Client({ name: "c", version: "1" })
  await client.connect(clientEnd)
  return async () => {
    const controller = new AbortController()
    const call = client.callTool({ name: "sleep", arguments: {} }, undefined, { signal: controller.signal })
    await wait(cancelAfterMs)
    controller.abort("cancelled by the benchmark")
    await call.catch(() => undefined)
  }
}

const floorSetup = async (): Promise<CancelledCall> => {
  // The server: a timer per request, cleared by the cancellation.
  const timers = new Map<number, ReturnType<typeof setTimeout>>()
  const toServer = (message: { readonly id?: number; readonly method?: string; readonly params?: unknown }) => {
    stampArrival(message)
    const id = cancelledId(message)
    if (id !== undefined) {
      clearTimeout(timers.get(id as number))
      timers.delete(id as number)
      stampStop(id)
      running--
      return
    }
    running++
    timers.set(
      message.id!,
      setTimeout(() => timers.delete(message.id!), sleepMs)
    )
  }
  let nextId = 1
  return async () => {
    const id = nextId++
    toServer({ id, method: "tools/call", params: { name: "sleep", arguments: {} } })
    await wait(cancelAfterMs)
    toServer({ method: "notifications/cancelled", params: { requestId: id } })
  }
}

const main = async () => {
  const cancel = await (impl === "effect" ? effectSetup() : impl === "sdk" ? sdkSetup() : floorSetup())
  // Stop delays, one cancellation at a time.
  for (let i = 0; i < samples; i++) await cancel()
  await wait(100)
  const delays: Array<number> = []
  for (const [id, at] of arrived) {
    const stop = stopped.get(id)
    delays.push(stop === undefined ? Number.NaN : (stop - at) * 1000)
  }
  const stoppedShare = delays.filter((d) => Number.isFinite(d)).length / Math.max(1, delays.length)
  // Memory over many cancellations, after as many again to reach a steady state
  // (code, caches and table capacities grow once).
  recording = false
  arrived.clear()
  stopped.clear()
  const cancelMany = async () => {
    for (let done = 0; done < cancels; done += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, cancels - done) }, cancel))
    }
    await wait(100)
  }
  await cancelMany()
  const before = heap()
  await cancelMany()
  const after = heap()
  process.send?.({ delays, stoppedShare, heapGrowth: after - before, running })
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`cancel.ts failed: ${String(error)}\n`)
    process.exit(1)
  }
)
