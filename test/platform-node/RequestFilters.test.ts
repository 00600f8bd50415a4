/**
 * Request filters of platform-node's `NodeHttpServer.layer`: a filter sees
 * each request before the Effect app; one that takes a request answers it
 * with Node's objects or hands it to the app later, one that does not leaves
 * it to the app; a filter is gone once its scope closes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttpServer from "@effect-mcp/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/** The app: answers `app` on /x. */
const routes = Layer.effectDiscard(
  Effect.gen(function* () {
    const router = yield* HttpRouter.HttpRouter
    yield* router.add("GET", "/x", Effect.succeed(HttpServerResponse.text("app")))
  })
)

const get = (url: string, path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`)
    return `${response.status} ${await response.text()}`
  })

describe("NodeHttpServer request filters", () => {
  it.live("see requests before the app, take some, hand some to the app later, and go with their scope", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(NodeHttpServer.layer(routes, { port: 0 }))
      const url = yield* NodeHttpServer.url.pipe(Effect.provide(context))
      const filters = yield* NodeHttpServer.RequestFilters.pipe(Effect.provide(context))
      assert.strictEqual(yield* get(url, "/x"), "200 app")

      const scope = yield* Scope.make()
      const seen: Array<string | undefined> = []
      yield* filters
        .add((request, response, app) => {
          seen.push(request.url)
          if (request.url === "/x?taken") {
            response.writeHead(203, { "content-type": "text/plain" }).end("filter")
            return true
          }
          if (request.url === "/x?later") {
            // Taken now, handed to the app once something asynchronous is done.
            setImmediate(() => app(request, response))
            return true
          }
          return false
        })
        .pipe(Scope.provide(scope))
      assert.strictEqual(yield* get(url, "/x?taken"), "203 filter")
      assert.strictEqual(yield* get(url, "/x?later"), "200 app")
      assert.strictEqual(yield* get(url, "/x"), "200 app")
      assert.deepStrictEqual(seen, ["/x?taken", "/x?later", "/x"])

      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(yield* get(url, "/x?taken"), "200 app")
      assert.strictEqual(seen.length, 3)
    }).pipe(Effect.scoped)
  )
})
