/**
 * The tracer of the bench's tracing mode (`--tracing`): real spans (effect's
 * `NativeSpan`, attributes and all) handed to an exporter that only counts
 * them, so a traced row measures what effect-mcp's tracing costs per call
 * (span creation, attributes, trace context in `_meta`, its parsing on the
 * other side) without the cost of a collector's wire format or network.
 */
import type * as Exit from "effect/Exit"
import * as Tracer from "effect/Tracer"

let exported = 0

/** A span that is "exported" (counted) when it ends. */
class CountedSpan extends Tracer.NativeSpan {
  override end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    super.end(endTime, exit)
    exported++
  }
}

/** Makes spans and counts each one as it ends (the no-op exporter). */
export const tracer: Tracer.Tracer = Tracer.make({
  span: (options) => new CountedSpan(options)
})

/** The spans ended so far (a check that tracing was on). */
export const exportedSpans = (): number => exported
