/**
 * Connects the official SDK's Transport interface to one end of a
 * MemoryTransport pair. Every message crosses as JSON text, as it would on a
 * real wire.
 */
import type { Transport as SdkTransport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type * as MemoryTransport from "@effect-mcp/engine/MemoryTransport"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"

export class SdkTransportAdapter implements SdkTransport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined
  private reader: Fiber.Fiber<void, unknown> | undefined
  private closed = false
  private readonly end: MemoryTransport.End

  constructor(end: MemoryTransport.End) {
    this.end = end
  }

  async start(): Promise<void> {
    this.reader = Effect.runFork(
      Stream.runForEach(this.end.incoming, (frame) =>
        Effect.sync(() => {
          if (Result.isFailure(frame)) return
          const text = JSON.stringify(frame.success)
          const parsed = JSON.parse(text) as JSONRPCMessage | ReadonlyArray<JSONRPCMessage>
          for (const message of Array.isArray(parsed) ? parsed : [parsed]) this.onmessage?.(message)
        })
      ).pipe(Effect.ensuring(Effect.sync(() => this.finish())))
    )
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const decoded = JSON.parse(JSON.stringify(message)) as JsonRpc.Message
    await Effect.runPromise(this.end.send(decoded))
  }

  async close(): Promise<void> {
    await Effect.runPromise(this.end.close)
    if (this.reader !== undefined) await Effect.runPromise(Fiber.interrupt(this.reader))
    this.finish()
  }

  private finish() {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }
}
