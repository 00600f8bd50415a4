/**
 * The fixture resources of the official conformance suite: a text and a
 * binary resource, a template whose reads echo their id, and a resource to
 * subscribe to.
 */
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Base64 from "effect/encoding/Base64"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { redPixelPng } from "./media.ts"

export const staticText = Resource.make({
  uri: "test://static-text",
  name: "Static Text Resource",
  description: "A static text resource for testing",
  mimeType: "text/plain",
  read: Effect.succeed("This is the content of the static text resource.")
})

export const staticBinary = Resource.make({
  uri: "test://static-binary",
  name: "Static Binary Resource",
  description: "A static binary resource (a 1x1 red PNG) for testing",
  mimeType: "image/png",
  read: Effect.succeed(Result.getOrThrow(Base64.decode(redPixelPng)))
})

export const watched = Resource.make({
  uri: "test://watched-resource",
  name: "Watched Resource",
  description: "A resource to subscribe to",
  mimeType: "text/plain",
  read: Effect.succeed("Watched resource content")
})

export const dataTemplate = ResourceTemplate.make({
  uriTemplate: "test://template/{id}/data",
  name: "Resource Template",
  description: "A resource template: the id is substituted into the data",
  mimeType: "application/json",
  complete: {
    id: (value) => Effect.succeed(["1", "2", "3", "123"].filter((id) => id.startsWith(value)))
  },
  read: ({ id }) =>
    Effect.succeed(JSON.stringify({ id: String(id), templateTest: true, data: `Data for ID: ${String(id)}` }))
})

export const resources = [staticText, staticBinary, watched] as const
export const templates = [dataTemplate] as const
