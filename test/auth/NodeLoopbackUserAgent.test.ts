/**
 * The loopback user agent of command-line hosts, driven by real HTTP
 * requests: the "browser" (the `open` function) follows the authorization URL
 * to the redirect URI, as an authorization server's redirect would send it.
 */
import * as net from "node:net"
import * as NodeLoopbackUserAgent from "@effect-mcp/platform-node/NodeLoopbackUserAgent"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

/** Whether something accepts connections on 127.0.0.1:`port`. */
const accepting = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, body: await response.text() }
  })

describe("NodeLoopbackUserAgent", () => {
  it.live("returns the redirect the browser brings to 127.0.0.1, answers it with a page, then stops listening", () =>
    Effect.gen(function* () {
      const pages: Array<{ readonly status: number; readonly body: string }> = []
      let browser: Fiber.Fiber<void> | undefined
      const userAgent = yield* NodeLoopbackUserAgent.make({
        // The authorization server at once redirects the browser back with a code.
        open: (authorizationUrl) =>
          Effect.gen(function* () {
            const state = authorizationUrl.searchParams.get("state")
            const redirect = new URL(authorizationUrl.searchParams.get("redirect_uri")!)
            // A stray request (a favicon), or one with another login's state, is not the redirect.
            pages.push(yield* get(new URL("/favicon.ico", redirect).href))
            pages.push(yield* get(`${redirect.href}?code=forged&state=another`))
            redirect.searchParams.set("code", "the-code")
            redirect.searchParams.set("state", state!)
            pages.push(yield* get(redirect.href))
          }).pipe(
            Effect.forkDetach,
            Effect.flatMap((fiber) =>
              Effect.sync(() => {
                browser = fiber
              })
            )
          )
      })
      const redirectUri = new URL(userAgent.redirectUri)
      assert.strictEqual(redirectUri.hostname, "127.0.0.1")
      assert.strictEqual(redirectUri.pathname, "/callback")
      const port = Number(redirectUri.port)
      assert.isAbove(port, 0)
      // Nothing listens between logins.
      assert.isFalse(yield* accepting(port))

      const authorizationUrl = new URL("https://auth.example/authorize")
      authorizationUrl.searchParams.set("state", "s-1")
      authorizationUrl.searchParams.set("redirect_uri", userAgent.redirectUri)
      const redirect = yield* userAgent.authorize(authorizationUrl)
      assert.strictEqual(redirect.searchParams.get("code"), "the-code")
      assert.strictEqual(redirect.searchParams.get("state"), "s-1")
      assert.strictEqual(`${redirect.origin}${redirect.pathname}`, userAgent.redirectUri)
      yield* Fiber.join(browser!)
      assert.strictEqual(pages[0]?.status, 404)
      assert.strictEqual(pages[1]?.status, 400)
      assert.strictEqual(pages[2]?.status, 200)
      assert.include(pages[2]?.body, "Logged in")
      // The page never shows what the redirect carried.
      assert.notInclude(pages[2]?.body, "the-code")
      assert.isFalse(yield* accepting(port))
    })
  )

  it.live("an error answer is returned for the client to report; the page names only its code", () =>
    Effect.gen(function* () {
      let page = ""
      let browser: Fiber.Fiber<void> | undefined
      const userAgent = yield* NodeLoopbackUserAgent.make({
        open: (authorizationUrl) =>
          Effect.gen(function* () {
            const redirect = new URL(authorizationUrl.searchParams.get("redirect_uri")!)
            redirect.searchParams.set("error", "<access_denied>")
            page = (yield* get(redirect.href)).body
          }).pipe(
            Effect.forkDetach,
            Effect.flatMap((fiber) =>
              Effect.sync(() => {
                browser = fiber
              })
            )
          )
      })
      const authorizationUrl = new URL("https://auth.example/authorize")
      authorizationUrl.searchParams.set("redirect_uri", userAgent.redirectUri)
      const redirect = yield* userAgent.authorize(authorizationUrl)
      assert.strictEqual(redirect.searchParams.get("error"), "<access_denied>")
      yield* Fiber.join(browser!)
      assert.include(page, "Login failed")
      assert.notInclude(page, "<access_denied>")
      assert.include(page, "&#60;access_denied&#62;")
    })
  )

  it.live("no redirect within the timeout fails with AuthorizationFailed and closes the listener", () =>
    Effect.gen(function* () {
      const userAgent = yield* NodeLoopbackUserAgent.make({ open: () => Effect.void, timeout: "100 millis" })
      const port = Number(new URL(userAgent.redirectUri).port)
      const error = yield* Effect.flip(userAgent.authorize(new URL("https://auth.example/authorize")))
      assert.strictEqual(error._tag, "AuthorizationFailed")
      assert.strictEqual(error.step, "user agent")
      assert.include(error.message, "no redirect")
      assert.isFalse(yield* accepting(port))
    })
  )

  it.live("a port in use fails with AuthorizationFailed naming it", () =>
    Effect.gen(function* () {
      // The user is sent to the browser once the listener is up: `open` tells the test.
      const opened = yield* Deferred.make<void>()
      const first = yield* NodeLoopbackUserAgent.make({
        open: () => Deferred.succeed(opened, undefined),
        timeout: "20 seconds"
      })
      const port = Number(new URL(first.redirectUri).port)
      const waiting = yield* Effect.forkChild(first.authorize(new URL("https://auth.example/authorize")))
      yield* Deferred.await(opened)
      assert.isTrue(yield* accepting(port))
      const error = yield* Effect.flip(NodeLoopbackUserAgent.make({ port }))
      assert.include(error.message, `127.0.0.1:${port}`)
      yield* get(first.redirectUri)
      yield* Fiber.join(waiting)
    })
  )
})
