/**
 * A headless user agent for oidc-provider's dev interactions: it follows the
 * authorization URL's redirects with a cookie jar, fills the login form
 * (any login and password) and the consent form by POSTs, and returns the URL
 * the provider redirects to the redirect URI with. No browser.
 */
import { AuthorizationFailed } from "@effect-mcp/auth/OAuthClientError"
import * as UserAgent from "@effect-mcp/auth/UserAgent"
import * as Effect from "effect/Effect"

/** A user agent logging in as `login`; `visits` counts the logins it performed. */
export const make = (redirectUri: string, login = "alice") => {
  let visits = 0
  const userAgent = UserAgent.make(redirectUri, (authorizationUrl) =>
    Effect.tryPromise({
      try: async () => {
        visits++
        const jar = new Map<string, string>()
        const send = async (url: URL, init: RequestInit = {}) => {
          const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ")
          const response = await fetch(url, {
            ...init,
            redirect: "manual",
            headers: { ...(init.headers as Record<string, string>), ...(cookie === "" ? {} : { cookie }) }
          })
          for (const line of response.headers.getSetCookie()) {
            const [pair] = line.split(";")
            const at = pair!.indexOf("=")
            const name = pair!.slice(0, at)
            const value = pair!.slice(at + 1)
            if (value === "") jar.delete(name)
            else jar.set(name, value)
          }
          return response
        }
        let url = authorizationUrl
        for (let step = 0; step < 20; step++) {
          if (url.href.startsWith(redirectUri)) return url
          let response = await send(url)
          if (response.status === 200) {
            const html = await response.text()
            const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1]
            const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
            if (prompt === undefined || action === undefined) throw new Error("no interaction form")
            const fields = prompt === "login" ? { prompt, login, password: "any-password" } : { prompt }
            response = await send(new URL(action, url), {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams(fields).toString()
            })
          }
          const location = response.headers.get("location")
          if (response.status < 300 || response.status >= 400 || location === null) {
            throw new Error(`unexpected answer ${response.status}`)
          }
          await response.body?.cancel()
          url = new URL(location, url)
        }
        throw new Error("too many redirects")
      },
      catch: (error) => new AuthorizationFailed({ step: "user agent", detail: String(error) })
    })
  )
  return { userAgent, visits: () => visits }
}
