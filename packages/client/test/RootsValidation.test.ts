/**
 * Roots are `file://` URIs (the spec, every revision that has roots): the
 * client checks every list it answers `roots/list` with, whatever its source,
 * and never sends one holding another URI; `RootsList.set` refuses such a
 * list with a typed `InvalidRoot`. Stateful revisions: the server gets an
 * `InternalError` that does not name the root (the client logs it);
 * 2026-07-28: the call that asked fails with `InvalidRoot`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as RootsHandler from "@effect-mcp/client/RootsHandler"
import type * as Session from "@effect-mcp/engine/Session"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import * as McpError from "@effect-mcp/protocol/McpError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ServerControl } from "./fixtures.ts"
import { connect } from "./fixtures.ts"

/** A tool that asks the client for its roots (a request, or an `input_required` round on 2026-07-28). */
const askRoots =
  (control: ServerControl): Session.Handler =>
  (p, info) =>
    Effect.gen(function* () {
      const params = p as { readonly inputResponses?: unknown }
      if (!info.revision.stateless) {
        const result = yield* control
          .session()
          .request("roots/list", {})
          .pipe(Effect.catch((e) => Effect.fail(new McpError.InternalError({ message: `${e._tag}: ${e.message}` }))))
        return { content: [{ type: "text", text: JSON.stringify(result) }] }
      }
      if (params.inputResponses === undefined) {
        return {
          resultType: "input_required",
          inputRequests: { q: { method: "roots/list", params: {} } },
          requestState: "s1"
        }
      }
      return { content: [{ type: "text", text: JSON.stringify(params.inputResponses) }] }
    })

const server = { handlers: [["tools/call", askRoots] as const] }

/** True when some frame the client sent carries `text`. */
const sentAnything = (sent: ReadonlyArray<JsonRpc.Message>, text: string) =>
  sent.some((message) => JSON.stringify(message).includes(text))

describe("roots are file:// URIs", () => {
  it.effect("validate accepts file:// URIs and names the first root that is not one", () =>
    Effect.gen(function* () {
      const good = [{ uri: "file:///home/me" }, { uri: "FILE://host/share", name: "share" }]
      assert.deepStrictEqual(yield* RootsHandler.validate(good), good)
      for (const uri of ["https://example.com/repo", "/home/me", "file:/home/me", "file:///a b", ""]) {
        const error = yield* Effect.flip(RootsHandler.validate([{ uri: "file:///ok" }, { uri }]))
        assert.strictEqual(error._tag, "InvalidRoot")
        assert.strictEqual(error.uri, uri)
        assert.include(error.message, "not a file:// URI")
      }
    })
  )

  it.effect("RootsList.set refuses a list with a non-file root: the list is kept, nothing is announced", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(RootsHandler.layer([{ uri: "file:///work" }]))
      const list = Context.get(context, RootsHandler.RootsList)
      const error = yield* Effect.flip(list.set([{ uri: "https://example.com/repo" }]))
      assert.strictEqual(error._tag, "InvalidRoot")
      assert.deepStrictEqual(yield* list.get, [{ uri: "file:///work" }])
    })
  )

  it.effect("stateful: a handler answering a non-file root sends the server an error, never the root", () =>
    Effect.gen(function* () {
      const roots = RootsHandler.layerFrom({ list: Effect.succeed([{ uri: "https://example.com/repo" }]) })
      const { client, wire } = yield* connect("2025-11-25", { server, handlers: roots })
      const error = yield* Effect.flip(client.callTool("ask", {}))
      assert.include(error.message, "not all file:// URIs")
      assert.isFalse(sentAnything(wire.sent, "example.com"))
    })
  )

  it.effect("2026-07-28: the call that asked fails with InvalidRoot, and the root is never sent", () =>
    Effect.gen(function* () {
      const roots = RootsHandler.layer([{ uri: "https://example.com/repo" }])
      const { client, wire } = yield* connect("2026-07-28", { server, handlers: roots })
      const error = yield* Effect.flip(client.callTool("ask", {}))
      assert.strictEqual(error._tag, "InvalidRoot")
      assert.isFalse(sentAnything(wire.sent, "example.com"))
    })
  )
})
