/**
 * The table of outgoing requests awaiting a response. Ids are integers that
 * double as progress tokens, so one map serves both lookups.
 */
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import type * as McpError from "@effect-mcp/protocol/McpError"
import * as Deferred from "effect/Deferred"
import * as Exit from "effect/Exit"
import type * as CurrentRequest from "../CurrentRequest.ts"
import type * as PeerError from "../PeerError.ts"

export interface Pending {
  readonly id: number
  readonly method: string
  readonly relatedRequestId: JsonRpc.RequestId | undefined
  readonly deferred: Deferred.Deferred<unknown, McpError.McpError | PeerError.SessionClosed>
  onProgress: ((update: CurrentRequest.ProgressUpdate) => void) | undefined
  lastProgress: number
  lastProgressAt: number
  /** A response, timeout or cancellation has decided this request; later answers are dropped. */
  settled: boolean
}

export class PendingTable {
  private nextId = 1
  private readonly entries = new Map<JsonRpc.RequestId, Pending>()

  open(method: string, relatedRequestId: JsonRpc.RequestId | undefined): Pending {
    const entry: Pending = {
      id: this.nextId++,
      method,
      relatedRequestId,
      deferred: Deferred.makeUnsafe(),
      onProgress: undefined,
      lastProgress: Number.NEGATIVE_INFINITY,
      lastProgressAt: Number.NEGATIVE_INFINITY,
      settled: false
    }
    this.entries.set(entry.id, entry)
    return entry
  }

  get(id: JsonRpc.RequestId): Pending | undefined {
    return this.entries.get(id)
  }

  remove(entry: Pending): void {
    this.entries.delete(entry.id)
  }

  failAll(error: (entry: Pending) => PeerError.SessionClosed): void {
    for (const entry of this.entries.values()) {
      if (!entry.settled) {
        entry.settled = true
        Deferred.doneUnsafe(entry.deferred, Exit.fail(error(entry)))
      }
    }
    this.entries.clear()
  }

  get size(): number {
    return this.entries.size
  }
}
