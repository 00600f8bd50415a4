/**
 * The multi-round-trip fixtures of the suite's 2026-07-28 scenarios
 * (SEP-2322): tools and a prompt that ask the client for input with the keys
 * the scenarios look for. On 2026-07-28 each ask becomes an entry of an
 * `input_required` result; on stateful revisions the same code sends
 * server-to-client requests.
 */
import type * as ElicitationWire from "@effect-mcp/protocol/Elicitation"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Roots from "@effect-mcp/server/Roots"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const noInput = Schema.Struct({})

/** A form of one required string field. */
const askString = (key: string, message: string, field: string) =>
  Elicitation.request(
    {
      message,
      requestedSchema: { type: "object", properties: { [field]: { type: "string" } }, required: [field] }
    },
    { key }
  ).pipe(
    Effect.map((result) => {
      const value = result.action === "accept" ? result.content?.[field] : undefined
      return typeof value === "string" ? value : `(${result.action})`
    })
  )

const askSampling = (key: string, text: string, maxTokens: number) =>
  Sampling.createMessage({ messages: [{ role: "user", content: { type: "text", text } }], maxTokens }, { key }).pipe(
    Effect.map(Sampling.text)
  )

const askRoots = (key: string) => Effect.map(Roots.listWith({ key }), (roots) => roots.map((root) => root.uri))

export const elicitation = Tool.make("test_input_required_result_elicitation", {
  description: "Asks for the user's name (input request `user_name`) and greets them",
  input: noInput,
  handler: () => Effect.map(askString("user_name", "What is your name?", "name"), (name) => `Hello, ${name}!`)
})

export const sampling = Tool.make("test_input_required_result_sampling", {
  description: "Asks the client's model a question (input request `capital_question`)",
  input: noInput,
  handler: () =>
    Effect.map(
      askSampling("capital_question", "What is the capital of France?", 100),
      (answer) => `Sampling response: ${answer}`
    )
})

export const listRoots = Tool.make("test_input_required_result_list_roots", {
  description: "Asks for the client's roots (input request `client_roots`)",
  input: noInput,
  handler: () => Effect.map(askRoots("client_roots"), (roots) => `Client roots: ${roots.join(", ")}`)
})

const confirmSchema: ElicitationWire.RequestedSchema = {
  type: "object",
  properties: { ok: { type: "boolean" } },
  required: ["ok"]
}

export const requestState = Tool.make("test_input_required_result_request_state", {
  description: "Asks for a confirmation; the answer comes back with a signed requestState",
  input: noInput,
  handler: () =>
    Elicitation.request({ message: "Please confirm", requestedSchema: confirmSchema }, { key: "confirm" }).pipe(
      Effect.map((result) => `state-ok: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`)
    )
})

export const multipleInputs = Tool.make("test_input_required_result_multiple_inputs", {
  description: "Asks for a name, a sampled greeting and the roots at once",
  input: noInput,
  handler: () =>
    Effect.all(
      [
        askString("user_name", "What is your name?", "name"),
        askSampling("greeting", "Generate a greeting", 50),
        askRoots("client_roots")
      ],
      { concurrency: "unbounded" }
    ).pipe(Effect.map(([name, greeting, roots]) => `name=${name}, greeting=${greeting}, roots=${roots.join(", ")}`))
})

export const multiRound = Tool.make("test_input_required_result_multi_round", {
  description: "Asks two questions in two rounds (step1, then step2)",
  input: noInput,
  handler: () =>
    Effect.gen(function* () {
      const name = yield* askString("step1", "Step 1: What is your name?", "name")
      const color = yield* askString("step2", "Step 2: What is your favorite color?", "color")
      return `Completed: name=${name}, color=${color}`
    })
})

export const tamperedState = Tool.make("test_input_required_result_tampered_state", {
  description: "Asks for a confirmation; a tampered requestState is rejected",
  input: noInput,
  handler: () =>
    Elicitation.request({ message: "Please confirm", requestedSchema: confirmSchema }, { key: "confirm" }).pipe(
      Effect.map((result) => `Confirmed: action=${result.action}`)
    )
})

/** Asks only for what the client declared it can answer. */
export const capabilities = Tool.make("test_input_required_result_capabilities", {
  description: "Asks only through the capabilities the client declared",
  input: noInput,
  handler: () =>
    Effect.gen(function* () {
      const request = yield* ServerRequest.ServerRequest
      const declared = request.clientCapabilities as { readonly [key: string]: unknown }
      const asks: Array<Effect.Effect<string, ServerRequest.ClientRequestError, ServerRequest.ServerRequest>> = []
      if (declared.sampling !== undefined) asks.push(askSampling("capability_sampling", "Say hello", 20))
      if (declared.elicitation !== undefined) {
        asks.push(askString("capability_elicitation", "What is your name?", "name"))
      }
      if (declared.roots !== undefined) asks.push(Effect.map(askRoots("capability_roots"), (r) => r.join(", ")))
      if (asks.length === 0) return "The client declared no capability to ask through"
      const answers = yield* Effect.all(asks, { concurrency: "unbounded" })
      return `Answers: ${answers.join("; ")}`
    })
})

export const prompt = Prompt.make({
  name: "test_input_required_result_prompt",
  description: "A prompt that asks the user for context first (input request `user_context`)",
  handler: () =>
    Effect.map(
      askString("user_context", "What context should the prompt use?", "context"),
      (context) => `Use this context: ${context}`
    )
})

export const tools = [
  elicitation,
  sampling,
  listRoots,
  requestState,
  multipleInputs,
  multiRound,
  tamperedState,
  capabilities
] as const
