/**
 * A client's `capabilities.extensions` survives the decoding of `initialize`
 * on every revision that has the handshake: the schema names the member only
 * from 2026-07-28, but capabilities are open objects before it too, and MCP
 * Apps hosts (the official SDK 1.x client among them) declare the extension
 * there in `initialize`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as IncomingValidator from "@effect-mcp/protocol/IncomingValidator"
import * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as Registry from "@effect-mcp/protocol/Registry"
import * as Result from "effect/Result"

const ui = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } }

describe("initialize keeps the client's extensions", () => {
  for (const version of ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const) {
    it(version, () => {
      const server = IncomingValidator.make(Registry.get(version), { receiver: "server" })
      const capabilities = { roots: { listChanged: true }, extensions: ui }
      const validated = server.validate(
        JsonRpc.request(1, "initialize", {
          protocolVersion: version,
          capabilities,
          clientInfo: { name: "host", version: "1" }
        })
      )
      assert.isTrue(Result.isSuccess(validated))
      const params = Result.getOrThrow(validated).params as { readonly capabilities: unknown }
      assert.deepStrictEqual(params.capabilities, capabilities)
    })
  }
})
