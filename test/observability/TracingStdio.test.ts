/**
 * The trace of a call whose tool asks the client for a sampling, over real
 * stdio: the server is a child process (fixtures/tracedStdioServer.ts) with
 * a span recorder of its own that writes each span it ends to stderr; the
 * client records its spans here. Together they are one trace on both
 * revisions, as over memory (Tracing.test.ts) and Streamable HTTP; the W3C
 * baggage a call carries reaches the server's handler and, through the
 * server's sampling request, the client's sampling handler.
 */
import { assert, describe, it } from "@effect/vitest"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as Baggage from "@effect-mcp/engine/Baggage"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import type * as ProtocolVersion from "@effect-mcp/protocol/ProtocolVersion"
import * as SpanRecorder from "@effect-mcp/testing/SpanRecorder"
import * as Effect from "effect/Effect"
import * as ServerProcess from "../support/ServerProcess.ts"
import * as TraceChain from "./traceChain.ts"

const fixture = new URL("./fixtures/tracedStdioServer.ts", import.meta.url).pathname

/** The spans a child wrote, and the signal fired as each lands. */
type ChildSpans = Array<SpanRecorder.RecordedSpan> & { readonly changes: ServerProcess.Changes }

const childSpansOf = (): ChildSpans => Object.assign([], { changes: ServerProcess.makeChanges() })

/** The client's transport to a fresh child; the spans the child writes to stderr land in `childSpans`. */
const spawn = (childSpans: ChildSpans) => {
  let pending = ""
  return NodeStdio.layerClient({
    command: ServerProcess.node,
    args: [...ServerProcess.sourceConditions, fixture],
    cwd: ServerProcess.root,
    stderr: (chunk) =>
      Effect.sync(() => {
        pending += Buffer.from(chunk).toString("utf8")
        const lines = pending.split("\n")
        pending = lines.pop()!
        for (const line of lines) if (line.startsWith("span ")) childSpans.push(JSON.parse(line.slice(5)))
        childSpans.changes.notify()
      })
  })
}

/** A client (answering samplings with `TraceChain.answer`) of a fresh child speaking `revision`. */
const connect = (childSpans: ChildSpans, revision: ProtocolVersion.ProtocolVersion) =>
  McpClient.connect(spawn(childSpans), {
    clientInfo: { name: "tracing-stdio-test", version: "1.0.0" },
    supportedVersions: [revision]
  }).pipe(Effect.provide(TraceChain.answer))

/**
 * Waits until the child has written `count` spans named `name` of `kind` (its stderr may trail its stdout:
 * a call's answer can arrive before the span of its last round is written).
 */
const childWrote = (childSpans: ChildSpans, name: string, kind: string, count = 1) =>
  ServerProcess.waitFor(
    () => childSpans.map((span) => `${span.kind} ${span.name}`).join("\n"),
    new RegExp(Array.from({ length: count }, () => `^${kind} ${name}$`).join("[\\s\\S]*"), "m"),
    undefined,
    childSpans.changes
  )

const revisions: ReadonlyArray<ProtocolVersion.ProtocolVersion> = ["2025-11-25", "2026-07-28"]

describe("request spans over stdio (a child process)", () => {
  for (const revision of revisions) {
    it.live(
      `client -> server -> sampling -> handler is one trace across the processes (${revision})`,
      () => {
        const recorder = SpanRecorder.make()
        const childSpans = childSpansOf()
        return Effect.gen(function* () {
          const client = yield* connect(childSpans, revision)
          const result = yield* client.callTool("ask", {}).pipe(Effect.withSpan("app"))
          assert.deepStrictEqual(result.content, [{ type: "text", text: "!" }])
          // On 2026-07-28 the call is two rounds (input_required, then the retry), each a server span.
          yield* childWrote(childSpans, "tools/call ask", "server", revision === "2026-07-28" ? 2 : 1)
          const { served } = TraceChain.assertOneTrace([...recorder.records(), ...childSpans], revision)
          // The server span was recorded by the child: no span of this process has its id.
          assert.isUndefined(recorder.spans.find((span) => span.spanId === served.spanId))
          assert.strictEqual(served.attributes["mcp.protocol.version"], revision)
        }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
      },
      30_000
    )
  }

  it.live(
    "W3C baggage reaches the server's handler and, through its sampling request, the client's handler",
    () => {
      const recorder = SpanRecorder.make()
      const childSpans = childSpansOf()
      return Effect.gen(function* () {
        const client = yield* connect(childSpans, "2025-11-25")
        const result = yield* client.callTool("tenant", {}).pipe(Baggage.withEntries({ tenant: "acme", user: "a b" }))
        const text = (result.content[0] as { readonly text: string }).text
        assert.deepStrictEqual(JSON.parse(text), {
          served: { tenant: "acme", user: "a b" },
          sampled: { tenant: "acme", user: "a b" }
        })
      }).pipe(Effect.scoped, Effect.withTracer(recorder.tracer))
    },
    30_000
  )
})
