/**
 * The tools and client handler the trace tests share, apart from any test
 * runner so a server in a child process (fixtures/tracedStdioServer.ts) can
 * serve them too: `ask` asks the client for a sampling, `answer` is the
 * client's sampling handler under a span of its own, `tenant` reports the
 * W3C baggage it was called with and the one the sampling handler saw.
 */
import * as SamplingHandler from "@effect-mcp/client/SamplingHandler"
import * as Baggage from "@effect-mcp/engine/Baggage"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const question = { messages: [{ role: "user" as const, content: { type: "text" as const, text: "?" } }], maxTokens: 5 }

/** A tool that asks the client for a sampling and answers with its text. */
export const ask = Tool.make("ask", {
  input: Schema.Struct({}),
  handler: () => Effect.map(Sampling.createMessage(question), Sampling.text)
})

/**
 * A tool that answers with `{ served, sampled }`: the baggage entries of the
 * request it serves, and what the client's sampling handler (`answer`) saw
 * of the sampling request the tool made.
 */
export const tenant = Tool.make("tenant", {
  input: Schema.Struct({}),
  handler: () =>
    Effect.gen(function* () {
      const served = yield* Baggage.entries
      yield* Effect.log("serving tenant")
      const sampled = Sampling.text(yield* Sampling.createMessage(question))
      return JSON.stringify({ served, sampled: sampled === "!" ? {} : JSON.parse(sampled) })
    })
})

/** The client's sampling handler, under a span of its own; its text is the baggage entries it sees. */
export const answer = SamplingHandler.layer(() =>
  Effect.map(Baggage.entries, (entries) => ({
    role: "assistant" as const,
    content: { type: "text" as const, text: Object.keys(entries).length === 0 ? "!" : JSON.stringify(entries) },
    model: "m"
  })).pipe(Effect.withSpan("my-sampling-handler"))
)
