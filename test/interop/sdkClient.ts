/**
 * The official SDK's `Client` (@modelcontextprotocol/sdk 1.32.2) as the
 * other peer: it declares sampling, elicitation and roots and answers them
 * with canned values, keeps the log messages and list changes it receives,
 * and remembers every message it sends (to learn request ids).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type JSONRPCMessage,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** JSON read by path in assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests read JSON results by path; the assertions are the type check
export type Json = any

export const sampledText = "mock answer"
export const rootUri = "file:///interop/root"

/** An accepted form: each field's default, else a value of its type ("Alice" for strings). */
const fill = (schema: Json): Record<string, unknown> => {
  const content: Record<string, unknown> = {}
  for (const [name, field] of Object.entries<Json>(schema?.properties ?? {})) {
    if (field.default !== undefined) content[name] = field.default
    else if (field.type === "boolean") content[name] = true
    else if (field.type === "number" || field.type === "integer") content[name] = 1
    else if (field.type === "array") content[name] = [field.items?.enum?.[0] ?? field.items?.anyOf?.[0]?.const]
    else if (Array.isArray(field.enum)) content[name] = field.enum[0]
    else if (Array.isArray(field.oneOf)) content[name] = field.oneOf[0].const
    else content[name] = "Alice"
  }
  return content
}

export interface SdkClient {
  readonly client: Client
  /** Data of every `notifications/message` received. */
  readonly logs: Array<unknown>
  /** Methods of the list-changed notifications received. */
  readonly listChanges: Array<string>
  /** Every message the client sent. */
  readonly sent: Array<JSONRPCMessage>
}

/** Connects a client over `transport` for the test's scope (closed at its end). */
export const connect = (transport: Transport): Effect.Effect<SdkClient, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const sent: Array<JSONRPCMessage> = []
      const send = transport.send.bind(transport)
      transport.send = (message, options) => {
        sent.push(message)
        return send(message, options)
      }
      const client = new Client(
        { name: "sdk-interop-client", version: "1.0.0" },
        { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } }
      )
      const logs: Array<unknown> = []
      const listChanges: Array<string> = []
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: "assistant",
        content: { type: "text", text: sampledText },
        model: "mock-model",
        stopReason: "endTurn"
      }))
      client.setRequestHandler(ElicitRequestSchema, async (request) => ({
        action: "accept",
        content: fill((request.params as Json).requestedSchema) as Record<string, string>
      }))
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: rootUri, name: "interop" }] }))
      client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
        logs.push(n.params.data)
      })
      client.setNotificationHandler(ToolListChangedNotificationSchema, async (n) => {
        listChanges.push(n.method)
      })
      client.setNotificationHandler(PromptListChangedNotificationSchema, async (n) => {
        listChanges.push(n.method)
      })
      await client.connect(transport)
      return { client, logs, listChanges, sent } satisfies SdkClient
    }),
    ({ client }) => Effect.promise(() => client.close().catch(() => undefined))
  )

/** The id the client gave the `tools/call` of `tool` (the latest one). */
export const callId = (sdk: SdkClient, tool: string): string | number | undefined => {
  for (let i = sdk.sent.length - 1; i >= 0; i--) {
    const message = sdk.sent[i] as Json
    if (message.method === "tools/call" && message.params?.name === tool) return message.id
  }
  return undefined
}
