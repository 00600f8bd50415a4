/**
 * The fixture tools of the official conformance suite (names and results as
 * it expects them), plus `test_long_running` for cancellation tests.
 */
import type * as Elicit from "@effect-mcp/protocol/Elicitation"
import * as CurrentRequest from "@effect-mcp/engine/CurrentRequest"
import * as CurrentHttpSession from "@effect-mcp/http/CurrentHttpSession"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { redPixelPng, silentWav } from "./media.ts"

const noInput = Schema.Struct({})

const elicitationText = (result: Elicit.ElicitResult) =>
  `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`

export const simpleText = Tool.make("test_simple_text", {
  description: "Returns a simple text response",
  input: noInput,
  handler: () => Effect.succeed("This is a simple text response for testing.")
})

export const imageContent = Tool.make("test_image_content", {
  description: "Returns an image (a 1x1 red PNG)",
  input: noInput,
  handler: () => Effect.succeed({ type: "image" as const, data: redPixelPng, mimeType: "image/png" })
})

export const audioContent = Tool.make("test_audio_content", {
  description: "Returns audio (a short silent WAV)",
  input: noInput,
  handler: () => Effect.succeed({ type: "audio" as const, data: silentWav, mimeType: "audio/wav" })
})

export const embeddedResource = Tool.make("test_embedded_resource", {
  description: "Returns an embedded text resource",
  input: noInput,
  handler: () =>
    Effect.succeed({
      type: "resource" as const,
      resource: {
        uri: "test://embedded-resource",
        mimeType: "text/plain",
        text: "This is an embedded resource content."
      }
    })
})

export const multipleContentTypes = Tool.make("test_multiple_content_types", {
  description: "Returns text, an image and an embedded resource",
  input: noInput,
  handler: () =>
    Effect.succeed([
      { type: "text" as const, text: "Multiple content types test:" },
      { type: "image" as const, data: redPixelPng, mimeType: "image/png" },
      {
        type: "resource" as const,
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 })
        }
      }
    ])
})

export const withLogging = Tool.make("test_tool_with_logging", {
  description: "Sends three log messages while it runs",
  input: noInput,
  handler: () =>
    Effect.gen(function* () {
      yield* ServerRequest.log("info", "Tool execution started")
      yield* Effect.sleep("50 millis")
      yield* ServerRequest.log("info", "Tool processing data")
      yield* Effect.sleep("50 millis")
      yield* ServerRequest.log("info", "Tool execution completed")
      return "Tool with logging executed successfully"
    })
})

export const withProgress = Tool.make("test_tool_with_progress", {
  description: "Reports progress 0, 50 and 100 of 100",
  input: noInput,
  handler: () =>
    Effect.gen(function* () {
      yield* ServerRequest.progress({ progress: 0, total: 100 })
      yield* Effect.sleep("50 millis")
      yield* ServerRequest.progress({ progress: 50, total: 100 })
      yield* Effect.sleep("50 millis")
      yield* ServerRequest.progress({ progress: 100, total: 100 })
      return "Tool with progress executed successfully"
    })
})

export const errorHandling = Tool.make("test_error_handling", {
  description: "Always answers with a tool error (isError: true)",
  input: noInput,
  handler: () =>
    Effect.succeed({
      isError: true,
      content: [{ type: "text" as const, text: "This tool intentionally returns an error for testing" }]
    })
})

export const sampling = Tool.make("test_sampling", {
  description: "Asks the client's model to answer a prompt (sampling/createMessage)",
  input: Schema.Struct({ prompt: Schema.String.annotate({ description: "The prompt to send to the LLM" }) }),
  handler: ({ prompt }) =>
    Sampling.createMessage({
      messages: [{ role: "user", content: { type: "text", text: prompt } }],
      maxTokens: 100
    }).pipe(Effect.map((result) => `LLM response: ${Sampling.text(result)}`))
})

export const elicitation = Tool.make("test_elicitation", {
  description: "Asks the user for a username and an email (elicitation/create)",
  input: Schema.Struct({ message: Schema.String.annotate({ description: "The message to show the user" }) }),
  handler: ({ message }) =>
    Elicitation.request({
      message,
      requestedSchema: {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" }
        },
        required: ["username", "email"]
      }
    }).pipe(Effect.map((result) => `User response: ${elicitationText(result)}`))
})

export const elicitationDefaults = Tool.make("test_elicitation_sep1034_defaults", {
  description: "Elicits a form whose every field has a default (SEP-1034)",
  input: noInput,
  handler: () =>
    Elicitation.request({
      message: "Please review and update the form fields with defaults",
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", description: "User name", default: "John Doe" },
          age: { type: "integer", description: "User age", default: 30 },
          score: { type: "number", description: "User score", default: 95.5 },
          status: {
            type: "string",
            description: "User status",
            enum: ["active", "inactive", "pending"],
            default: "active"
          },
          verified: { type: "boolean", description: "Verification status", default: true }
        }
      }
    }).pipe(Effect.map((result) => `Elicitation completed: ${elicitationText(result)}`))
})

export const elicitationEnums = Tool.make("test_elicitation_sep1330_enums", {
  description: "Elicits a form with the five enum variants (SEP-1330)",
  input: noInput,
  handler: () =>
    Elicitation.request({
      message: "Please select options from the enum fields",
      requestedSchema: {
        type: "object",
        properties: {
          untitledSingle: {
            type: "string",
            description: "Choose an option",
            enum: ["option1", "option2", "option3"]
          },
          titledSingle: {
            type: "string",
            description: "Choose a titled option",
            oneOf: [
              { const: "value1", title: "First Option" },
              { const: "value2", title: "Second Option" },
              { const: "value3", title: "Third Option" }
            ]
          },
          legacyEnum: {
            type: "string",
            description: "Choose a legacy option",
            enum: ["opt1", "opt2", "opt3"],
            enumNames: ["Option One", "Option Two", "Option Three"]
          },
          untitledMulti: {
            type: "array",
            description: "Choose multiple options",
            items: { type: "string", enum: ["option1", "option2", "option3"] }
          },
          titledMulti: {
            type: "array",
            description: "Choose multiple titled options",
            items: {
              anyOf: [
                { const: "value1", title: "First Choice" },
                { const: "value2", title: "Second Choice" },
                { const: "value3", title: "Third Choice" }
              ]
            }
          }
        }
      }
    }).pipe(Effect.map((result) => `Elicitation completed: ${elicitationText(result)}`))
})

/** The focal schema of the suite's JSON Schema 2020-12 scenario, advertised as is. */
export const jsonSchema2020 = Tool.make("json_schema_2020_12_tool", {
  description: "Tool with JSON Schema 2020-12 features",
  input: {
    $schema: Tool.jsonSchemaDialect,
    type: "object",
    $defs: {
      address: {
        $anchor: "addressDef",
        type: "object",
        properties: { street: { type: "string" }, city: { type: "string" } }
      }
    },
    properties: {
      name: { type: "string" },
      address: { $ref: "#/$defs/address" },
      contactMethod: { type: "string", enum: ["phone", "email"] },
      phone: { type: "string" },
      email: { type: "string" }
    },
    allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
    if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
    // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here, not a thenable
    then: { required: ["phone"] },
    else: { required: ["email"] },
    additionalProperties: false
  },
  handler: (args) => Effect.succeed(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)
})

/**
 * Drops the SSE connection that would carry its result (the client resumes
 * with `Last-Event-ID`), then answers: the result reaches the client on the
 * resumed stream. Outside Streamable HTTP it just answers.
 */
export const reconnection = Tool.make("test_reconnection", {
  description: "Closes its SSE response stream mid-call; the result arrives after the client reconnects",
  input: noInput,
  handler: () =>
    Effect.gen(function* () {
      yield* CurrentHttpSession.closeRequestStream
      yield* Effect.sleep("100 millis")
      return "Reconnection test completed successfully"
    })
})

/**
 * Runs for `durationMs`, reporting progress every 100 ms. It writes
 * `started <request id>` to stderr as it begins and, when cancelled, its
 * finalizer writes `cancelled <request id>`: tests watch for both.
 */
export const longRunning = Tool.make("test_long_running", {
  description: "Runs for durationMs, reporting progress every 100 ms; reports its cancellation on stderr",
  input: Schema.Struct({
    durationMs: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
      description: "How long to run, in milliseconds"
    })
  }),
  handler: ({ durationMs }) =>
    Effect.gen(function* () {
      yield* CurrentRequest.CurrentRequest.use((request) => Console.error(`started ${request.id}`))
      const start = yield* Clock.currentTimeMillis
      let elapsed = 0
      while (elapsed < durationMs) {
        yield* Effect.sleep(`${Math.min(100, durationMs - elapsed)} millis`)
        elapsed = (yield* Clock.currentTimeMillis) - start
        yield* ServerRequest.progress({ progress: Math.min(elapsed, durationMs), total: durationMs })
      }
      return `Completed after ${elapsed} ms`
    }).pipe(
      Effect.onInterrupt(() => CurrentRequest.CurrentRequest.use((request) => Console.error(`cancelled ${request.id}`)))
    )
})

export const all = [
  simpleText,
  imageContent,
  audioContent,
  embeddedResource,
  multipleContentTypes,
  withLogging,
  withProgress,
  errorHandling,
  sampling,
  elicitation,
  elicitationDefaults,
  elicitationEnums,
  jsonSchema2020,
  reconnection,
  longRunning
] as const
