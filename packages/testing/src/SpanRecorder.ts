/**
 * An in-memory span exporter for tests: a `Tracer` that keeps every span it
 * makes, in the order they start, so a test can assert names, kinds,
 * parents, attributes and how each span ended. Installing it turns tracing
 * on for the sessions made under it (effect-mcp traces when a tracer other
 * than effect's default one is installed), so the engine's request spans and
 * the trace context it carries in `_meta` are recorded too.
 *
 * - `make()` gives a recorder: `tracer` to install (`Effect.withTracer`, or
 *   `layer(recorder)`), `spans` (effect's `NativeSpan`s, live), `named` (the
 *   one span of a name and kind), `records()` (plain, serializable copies).
 * - `toRecord(span)` is the plain copy of one span (ids, parent id, kind,
 *   attributes, links, outcome): what a recorder in another process can
 *   write out (`onEnd`) for the test to read back.
 * - `parentOf(span)` is a span's parent, when it has one.
 *
 * @example
 * ```ts
 * import { assert, it } from "@effect/vitest"
 * import { McpClient } from "@effect-mcp/client"
 * import { McpServer, Tool } from "@effect-mcp/server"
 * import { McpTest, SpanRecorder } from "@effect-mcp/testing"
 * import { Effect, Layer, Schema } from "effect"
 *
 * const Echo = Tool.make("echo", {
 *   input: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * const Server = Tool.layer(Echo).pipe(Layer.provideMerge(McpServer.layer({ name: "echo", version: "1.0.0" })))
 *
 * it.effect("a call is a CLIENT span continued by a SERVER span", () => {
 *   const recorder = SpanRecorder.make()
 *   return Effect.gen(function* () {
 *     const client = yield* McpClient.McpClient
 *     yield* client.callTool("echo", { text: "hi" })
 *     const call = recorder.named("tools/call echo", "client")
 *     const served = recorder.named("tools/call echo", "server")
 *     assert.strictEqual(SpanRecorder.parentOf(served)?.spanId, call.spanId)
 *     assert.strictEqual(served.traceId, call.traceId)
 *   }).pipe(Effect.provide(McpTest.layer(Server)), Effect.withTracer(recorder.tracer))
 * })
 * ```
 */
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

/** A span as plain data: what `toRecord` copies and `onEnd` receives. */
export interface RecordedSpan {
  readonly name: string
  readonly kind: Tracer.SpanKind
  readonly traceId: string
  readonly spanId: string
  /** The parent's span id; undefined for a root span. */
  readonly parentSpanId: string | undefined
  /** True when the parent came from outside the process (a `traceparent` read off the wire). */
  readonly parentIsExternal: boolean
  readonly sampled: boolean
  readonly attributes: Readonly<Record<string, unknown>>
  /** The spans this one links to (e.g. the HTTP request that carried an MCP request). */
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  /** `"success"` or `"failure"` once ended; undefined while it runs. */
  readonly outcome: "success" | "failure" | undefined
}

/** What `make` gives: the tracer to install and what it recorded. */
export interface SpanRecorder {
  /** The tracer to install (`Effect.withTracer(recorder.tracer)` or `layer(recorder)`). */
  readonly tracer: Tracer.Tracer
  /** Every span made so far, in the order they started (live: spans still running are included). */
  readonly spans: ReadonlyArray<Tracer.NativeSpan>
  /** The one span of that name (and kind, when given); throws, listing the spans seen, unless there is exactly one. */
  readonly named: (name: string, kind?: Tracer.SpanKind) => Tracer.NativeSpan
  /** Plain copies of every span made so far (see `toRecord`). */
  readonly records: () => ReadonlyArray<RecordedSpan>
  /** Forgets the spans recorded so far. */
  readonly clear: () => void
}

/** Options of `make`. */
export interface Options {
  /** Called with each span's plain copy when it ends (e.g. to write it out of a child process). */
  readonly onEnd?: ((span: RecordedSpan) => void) | undefined
}

/** The parent of a span, if any (an ExternalSpan when it was read off the wire). */
export const parentOf = (span: Tracer.AnySpan): Tracer.AnySpan | undefined =>
  span._tag === "Span" ? Option.getOrUndefined(span.parent) : undefined

/** A plain, serializable copy of a span (an external span has no name, kind or attributes of its own). */
export const toRecord = (span: Tracer.AnySpan): RecordedSpan => {
  if (span._tag === "ExternalSpan") {
    return {
      name: "",
      kind: "internal",
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: undefined,
      parentIsExternal: false,
      sampled: span.sampled,
      attributes: {},
      links: [],
      outcome: undefined
    }
  }
  const parent = parentOf(span)
  return {
    name: span.name,
    kind: span.kind,
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: parent?.spanId,
    parentIsExternal: parent?._tag === "ExternalSpan",
    sampled: span.sampled,
    attributes: Object.fromEntries(span.attributes),
    links: span.links.map((link) => ({ traceId: link.span.traceId, spanId: link.span.spanId })),
    outcome: span.status._tag === "Ended" ? (Exit.isSuccess(span.status.exit) ? "success" : "failure") : undefined
  }
}

const describe = (spans: ReadonlyArray<Tracer.NativeSpan>): string =>
  spans.map((span) => `${span.kind} ${span.name}`).join(", ")

/** A recorder: a tracer that keeps every span it makes. */
export const make = (options?: Options): SpanRecorder => {
  const spans: Array<Tracer.NativeSpan> = []
  const onEnd = options?.onEnd
  const tracer = Tracer.make({
    span: (spanOptions) => {
      const span = new Tracer.NativeSpan(spanOptions)
      if (onEnd !== undefined) {
        const end = span.end.bind(span)
        span.end = (endTime, exit) => {
          const ended = span.status._tag === "Ended"
          end(endTime, exit)
          if (!ended) onEnd(toRecord(span))
        }
      }
      spans.push(span)
      return span
    }
  })
  return {
    tracer,
    spans,
    named: (name, kind) => {
      const found = spans.filter((span) => span.name === name && (kind === undefined || span.kind === kind))
      if (found.length !== 1) {
        throw new Error(
          `expected one span ${kind === undefined ? "" : `${kind} `}${name}, found ${found.length} in: ${describe(spans)}`
        )
      }
      return found[0]!
    },
    records: () => spans.map(toRecord),
    clear: () => {
      spans.length = 0
    }
  }
}

/** A Layer that installs the recorder's tracer. */
export const layer = (recorder: SpanRecorder): Layer.Layer<never> => Layer.succeed(Tracer.Tracer, recorder.tracer)
