/**
 * RFC 8693 token exchange through the gateway, against a real OpenID provider
 * (oidc-provider on 127.0.0.1, with a token exchange grant registered): the
 * gateway's callers bring the provider's tokens for the gateway; its upstream
 * acts for the caller, and is called with a token the gateway exchanged for
 * the caller's at the provider, on a connection per caller. Every bearer
 * token the upstream receives is recorded as its verifier sees it: neither
 * caller's own token is among them, and each caller's calls carry a token of
 * their own; what the upstream logs during a call reaches its caller; a
 * refused exchange fails that call only. Official SDK 1.x clients downstream.
 */
import * as Principal from "@effect-mcp/auth/Principal"
import type * as TokenVerifier from "@effect-mcp/auth/TokenVerifier"
import * as Gateway from "@effect-mcp/gateway/Gateway"
import * as TokenExchange from "@effect-mcp/gateway/TokenExchange"
import * as UpstreamOAuth from "@effect-mcp/gateway/UpstreamOAuth"
import * as NodeConnector from "@effect-mcp/host/NodeConnector"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as jose from "jose"
import * as OidcProvider from "../support/OidcProvider.ts"
import * as Oauth from "./oauth.ts"

const gatewayClient = { id: "gateway", secret: "gateway-secret-0123456789abcdef0123" }
const alice = { id: "alice", secret: "alice-secret-0123456789abcdef012345" }
const bob = { id: "bob", secret: "bob-secret-0123456789abcdef01234567" }

/** The upstream: whom it acts for (the verified token's subject) and on whose behalf (`act.sub`). */
const Upstream = Tool.layer(
  Tool.make("whoami", {
    input: Schema.Struct({}),
    handler: () =>
      Effect.flatMap(Effect.orDie(Principal.current), (caller) => {
        const act = caller.claims.act as { readonly sub?: string } | undefined
        // Logged while serving the call: relayed to the caller from its own connection.
        return Effect.as(Effect.log(`acting for ${caller.subject}`), `${caller.subject} via ${act?.sub ?? "nobody"}`)
      })
  })
).pipe(Layer.provideMerge(McpServer.layer({ name: "notes", version: "1.0.0" })))

/** A verifier that records every token it is given before verifying it. */
const recording =
  (seen: Array<string>) =>
  (verifier: TokenVerifier.TokenVerifierShape): TokenVerifier.TokenVerifierShape => ({
    verify: (token) =>
      Effect.andThen(
        Effect.sync(() => seen.push(token)),
        verifier.verify(token)
      )
  })

describe("gateway: token exchange (oidc-provider)", () => {
  it.live(
    "each caller's calls carry a token exchanged for theirs; the upstream never sees a caller's own token",
    () =>
      Effect.gen(function* () {
        const exchanges: Array<{ readonly actor: string; readonly subject: string }> = []
        const provider = yield* OidcProvider.startWith({
          acceptResource: (indicator) => indicator.startsWith("http://127.0.0.1:"),
          extraClients: [alice, bob],
          tokenExchange: {
            clients: [gatewayClient],
            onExchange: (exchange) => {
              exchanges.push(exchange)
              // Bob's first exchange is refused: his first call fails, and the failure is not kept.
              if (exchanges.filter((e) => e.subject === "bob").length === 1 && exchange.subject === "bob") {
                throw new Error("refused once")
              }
            }
          }
        })
        const seen: Array<string> = []
        const upstream = yield* Layer.build(
          NodeMcpServer.layerHttp(Upstream, { auth: Oauth.protectedBy(provider, recording(seen)) })
        ).pipe(Effect.orDie)
        const upstreamUrl = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(upstream))}/mcp`
        const client = { clientId: gatewayClient.id, clientSecret: gatewayClient.secret, allowInsecureRequests: true }
        const gateway = Gateway.layer({
          server: { name: "gateway", version: "1.0.0" },
          config: { mcpServers: { notes: { type: "http", url: upstreamUrl } } },
          // The shared connection lists the catalog with the gateway's own token; calls go as their caller.
          credentials: { notes: UpstreamOAuth.clientCredentials(client) },
          tokenExchange: { notes: client },
          healthCheck: false
        }).pipe(Layer.provide(NodeConnector.layer()))
        const served = yield* Layer.build(
          NodeMcpServer.layerHttp(gateway, { auth: Oauth.protectedBy(provider, TokenExchange.keepingTokens) })
        ).pipe(Effect.orDie)
        const url = `${yield* NodeMcpServer.url.pipe(Effect.provideContext(served))}/mcp`

        const aliceToken = yield* provider.token(url, "notes:read", alice)
        const bobToken = yield* provider.token(url, "notes:read", bob)
        const [a, b] = yield* Effect.all([Oauth.connect(url, aliceToken), Oauth.connect(url, bobToken)])
        const whoami = (c: typeof a) =>
          Effect.map(
            Effect.promise(() => c.callTool({ name: "notes__whoami" })),
            Oauth.textOf
          )
        const logs: Array<unknown> = []
        a.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
          logs.push(n.params.data)
        })
        const before = seen.length
        assert.strictEqual(yield* whoami(a), "alice via gateway")
        assert.deepStrictEqual(logs, ["acting for alice"])
        const refused = yield* Effect.promise(() => b.callTool({ name: "notes__whoami" }))
        assert.strictEqual(refused.isError, true)
        assert.include(Oauth.textOf(refused), "unavailable to this caller")
        assert.strictEqual(yield* whoami(b), "bob via gateway")
        assert.strictEqual(yield* whoami(a), "alice via gateway")
        // One exchange per caller (and Bob's refused one): the caller's connection serves its next calls.
        assert.deepStrictEqual(exchanges, [
          { actor: "gateway", subject: "alice" },
          { actor: "gateway", subject: "bob" },
          { actor: "gateway", subject: "bob" }
        ])

        // On the wire: no caller's own token; each caller's calls with a token of their own, for the upstream.
        assert.notInclude(seen, aliceToken)
        assert.notInclude(seen, bobToken)
        const bySubject = new Map<string, Set<string>>()
        for (const token of seen.slice(before)) {
          const claims = jose.decodeJwt(token)
          const subject = String(claims.sub)
          if (subject === gatewayClient.id) continue
          assert.strictEqual(claims.aud, upstreamUrl)
          bySubject.set(subject, (bySubject.get(subject) ?? new Set()).add(token))
        }
        assert.deepStrictEqual([...bySubject.keys()].sort(), ["alice", "bob"])
        assert.strictEqual(bySubject.get("alice")?.size, 1)
        assert.strictEqual(bySubject.get("bob")?.size, 1)
        assert.notDeepEqual([...bySubject.get("alice")!], [...bySubject.get("bob")!])
      }),
    30_000
  )
})
