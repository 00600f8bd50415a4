/**
 * The gateway's own client credentials token for its upstreams
 * (`UpstreamOAuth.clientCredentials`), against an authorization server on
 * 127.0.0.1 (`node:http`: the upstream's protected resource metadata, the
 * server's metadata and its token endpoint, which counts its grants).
 * Connections that need a token at once share one grant: two upstreams
 * sharing the credential connect together with one token, and connections
 * made together after the token expired cost one new grant, not one each.
 */
import * as Connector from "@effect-mcp/host/Connector"
import * as McpConfig from "@effect-mcp/host/McpConfig"
import * as McpHost from "@effect-mcp/host/McpHost"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Tool from "@effect-mcp/server/Tool"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Credentials from "../src/Credentials.ts"
import * as Gateway from "../src/Gateway.ts"
import * as UpstreamOAuth from "../src/UpstreamOAuth.ts"
import { memory } from "./memoryConnector.ts"

const client = { id: "gateway", secret: "gateway-secret" }

/**
 * An authorization server and the metadata of the resource `<origin>/mcp` it protects, closed with the scope;
 * `grants` counts the token requests, each answered with a new token valid for an hour.
 */
const authorizationServer = Effect.acquireRelease(
  Effect.callback<{ readonly resource: string; readonly grants: () => number; readonly close: () => void }>(
    (resume) => {
      let grants = 0
      const server = createServer((req, res) => {
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const json = (status: number, body: object) => {
          res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
          res.end(JSON.stringify(body))
        }
        req.resume()
        req.on("end", () => {
          if (req.url === "/.well-known/oauth-protected-resource/mcp") {
            return json(200, { resource: `${origin}/mcp`, authorization_servers: [origin] })
          }
          if (req.url === "/.well-known/oauth-authorization-server") {
            return json(200, {
              issuer: origin,
              token_endpoint: `${origin}/token`,
              grant_types_supported: ["client_credentials"],
              token_endpoint_auth_methods_supported: ["client_secret_basic"]
            })
          }
          if (req.url === "/token" && req.method === "POST") {
            const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`
            if (req.headers.authorization !== basic) return json(401, { error: "invalid_client" })
            grants += 1
            return json(200, { access_token: `token-${grants}`, token_type: "Bearer", expires_in: 3600 })
          }
          json(404, { error: "not_found" })
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            resource: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
            grants: () => grants,
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      )
    }
  ),
  (server) => Effect.sync(server.close)
)

const credentialFor = () =>
  UpstreamOAuth.clientCredentials({ clientId: client.id, clientSecret: client.secret, allowInsecureRequests: true })

const Upstream = Tool.layer(
  Tool.make("echo", { input: Schema.Struct({}), handler: () => Effect.succeed("echo") })
).pipe(Layer.provideMerge(McpServer.layer({ name: "notes", version: "1.0.0" })))

describe("UpstreamOAuth", () => {
  it.effect("two upstreams sharing the credential connect at once with one grant", () =>
    Effect.gen(function* () {
      const as = yield* authorizationServer
      const upstream = yield* Layer.build(Upstream)
      // In-memory connections, each recording the authorization header the credential gave it.
      const headers: Array<string | undefined> = []
      const recording = Layer.effect(
        Connector.Connector,
        Effect.map(Connector.Connector, (memory) => ({
          connect: (name: string, config: McpConfig.ServerConfig) => {
            headers.push(McpConfig.isStdio(config) ? undefined : config.headers?.authorization)
            return memory.connect(name, config)
          }
        }))
      ).pipe(Layer.provide(memory({ a: upstream, b: upstream })))
      const credential = credentialFor()
      const server: McpConfig.RemoteServer = { type: "http", url: as.resource }
      const context = yield* Layer.build(
        Gateway.layer({
          server: { name: "gateway", version: "1.0.0" },
          config: { mcpServers: { a: server, b: server } },
          credentials: { a: credential, b: credential },
          healthCheck: false
        }).pipe(Layer.provide(recording))
      )
      const host = Context.get(context, McpHost.McpHost)
      yield* host.awaitReady("a")
      yield* host.awaitReady("b")
      // One grant, its token on both connections.
      assert.strictEqual(as.grants(), 1)
      assert.deepStrictEqual(headers, ["Bearer token-1", "Bearer token-1"])
    })
  )

  it.effect("connections made together after the token expired cost one new grant", () =>
    Effect.gen(function* () {
      const as = yield* authorizationServer
      const credential = credentialFor()
      const target = { name: "notes", server: { type: "http", url: as.resource } as McpConfig.RemoteServer }
      const connect = Effect.map(Credentials.resolve(credential, target), Redacted.value)
      assert.strictEqual(yield* connect, "Bearer token-1")
      // Kept while it is valid: the next connection asks no one.
      assert.strictEqual(yield* connect, "Bearer token-1")
      assert.strictEqual(as.grants(), 1)
      yield* TestClock.adjust("2 hours")
      const tokens = yield* Effect.all(
        Array.from({ length: 5 }, () => connect),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        tokens,
        Array.from({ length: 5 }, () => "Bearer token-2")
      )
      assert.strictEqual(as.grants(), 2)
    })
  )
})
