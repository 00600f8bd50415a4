/**
 * The fixture prompts of the official conformance suite: a plain prompt, one
 * with arguments (and completion for `arg1`), one embedding a resource and
 * one with an image.
 */
import type * as Prompts from "@effect-mcp/protocol/Prompts"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Effect from "effect/Effect"
import { redPixelPng } from "./media.ts"

export const simple = Prompt.make({
  name: "test_simple_prompt",
  description: "A simple prompt without arguments",
  handler: () => Effect.succeed("This is a simple prompt for testing.")
})

const arg1Values = ["paris", "park", "party", "test", "testing", "hello"]

export const withArguments = Prompt.make({
  name: "test_prompt_with_arguments",
  description: "A prompt with two required arguments",
  arguments: {
    arg1: {
      description: "First test argument",
      required: true,
      complete: (value) => Effect.succeed(arg1Values.filter((v) => v.startsWith(value)))
    },
    arg2: { description: "Second test argument", required: true }
  },
  handler: ({ arg1, arg2 }) => Effect.succeed(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`)
})

export const withEmbeddedResource = Prompt.make({
  name: "test_prompt_with_embedded_resource",
  description: "A prompt embedding the resource it is given",
  arguments: { resourceUri: { description: "URI of the resource to embed", required: true } },
  // Annotated: without a completer to infer from, a contextually typed handler leaves R unknown.
  handler: ({ resourceUri }: { readonly resourceUri: string }) =>
    Effect.succeed<ReadonlyArray<Prompts.PromptMessage>>([
      {
        role: "user" as const,
        content: {
          type: "resource" as const,
          resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." }
        }
      },
      { role: "user" as const, content: { type: "text" as const, text: "Please process the embedded resource above." } }
    ])
})

export const withImage = Prompt.make({
  name: "test_prompt_with_image",
  description: "A prompt with an image",
  handler: () =>
    Effect.succeed([
      { role: "user" as const, content: { type: "image" as const, data: redPixelPng, mimeType: "image/png" } },
      { role: "user" as const, content: { type: "text" as const, text: "Please analyze the image above." } }
    ])
})

export const all = [simple, withArguments, withEmbeddedResource, withImage] as const
