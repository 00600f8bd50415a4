/**
 * The one `fetch` of the client and the verifiers: every response body they
 * read (metadata documents, key sets, registration, token and introspection
 * answers) is read here first, up to a byte limit. The servers are not
 * trusted to be small: a protected resource's metadata is whatever the MCP
 * server sends, and `response.json()` would buffer any size. oauth4webapi and
 * jose take it as their `customFetch`, so their parsing reads the bounded copy.
 */

/**
 * 1 MiB. The documents read are kilobytes (a metadata document 1-5 KB, a key
 * set of a few RSA keys 2-10 KB, a token answer under 10 KB); a thousand times
 * that leaves room for key sets with certificate chains and metadata with many
 * extensions, while a hostile server costs at most this much per request.
 */
export const defaultMaxResponseBytes = 1024 * 1024

/** What is wrong with an answer over `limit` bytes. */
export const overLimit = (limit: number) => `larger than the ${limit}-byte limit (maxResponseBytes)`

/**
 * A response body over the limit: reading stopped there and the rest of the
 * body was cancelled. Named by the URL and the limit, never by the content.
 */
export class ResponseTooLarge extends Error {
  override readonly name = "ResponseTooLarge"
  readonly url: string
  readonly limit: number
  constructor(url: string, limit: number) {
    super(`the answer from ${url} is ${overLimit(limit)}`)
    this.url = url
    this.limit = limit
  }
}

/** Statuses whose response cannot have a body (the Response constructor refuses one). */
const nullBodyStatus = new Set([101, 103, 204, 205, 304])

/** The body of `response`, read whole unless it is over `limit` bytes (declared or sent). */
const readBody = async (response: Response, url: string, limit: number): Promise<Uint8Array<ArrayBuffer> | null> => {
  const body = response.body
  if (body === null) return null
  const declared = Number(response.headers.get("content-length") ?? Number.NaN)
  if (declared > limit) {
    await body.cancel().catch(() => {})
    throw new ResponseTooLarge(url, limit)
  }
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  while (true) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      // The chunk that crossed the limit is dropped with the rest; the connection is closed, not drained.
      await reader.cancel().catch(() => {})
      throw new ResponseTooLarge(url, limit)
    }
    chunks.push(value)
  }
  const whole = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    whole.set(chunk, at)
    at += chunk.byteLength
  }
  return whole
}

/**
 * `fetch` whose response body has already been read, at most `limit` bytes
 * of it; a larger one rejects with {@link ResponseTooLarge}. The request's
 * signal (its timeout) covers reading the body too.
 */
export const boundedFetch =
  (limit: number) =>
  async (url: string, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init)
    const body = await readBody(response, url, limit)
    return new Response(nullBodyStatus.has(response.status) ? null : body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }
