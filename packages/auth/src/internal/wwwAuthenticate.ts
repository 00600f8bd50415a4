/**
 * A tolerant parser of `WWW-Authenticate` values (RFC 9110 §11.6.1):
 *
 *   challenge   = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 *   auth-param  = token BWS "=" BWS ( token / quoted-string )
 *
 * Challenges and parameters are both comma-separated, so a new challenge is
 * recognised as a token not followed by `=`. Parsing stops at the first thing
 * that fits neither form and returns what came before it.
 */

/** One parsed challenge. */
export interface Challenge {
  readonly scheme: string
  readonly params: Record<string, string>
  token68: string | undefined
}

const tokenChar = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/
const token68Char = /[A-Za-z0-9\-._~+/]/

/** The challenges of one header value. */
export const parse = (input: string): Array<Challenge> => {
  const out: Array<Challenge> = []
  let i = 0
  const n = input.length
  const skipSpace = () => {
    while (i < n && (input[i] === " " || input[i] === "\t")) i++
  }
  const skipSeparators = () => {
    while (i < n && (input[i] === " " || input[i] === "\t" || input[i] === ",")) i++
  }
  const readToken = (): string => {
    const start = i
    while (i < n && tokenChar.test(input[i]!)) i++
    return input.slice(start, i)
  }
  // Whether a `name=` (an auth-param, not a token68 nor a new scheme) starts at i.
  const paramAhead = (): boolean => {
    let j = i
    while (j < n && tokenChar.test(input[j]!)) j++
    if (j === i) return false
    while (j < n && (input[j] === " " || input[j] === "\t")) j++
    if (input[j] !== "=") return false
    // A value must follow (a token or a quoted string); otherwise the `=` is token68 padding.
    j++
    while (j < n && (input[j] === " " || input[j] === "\t")) j++
    return j < n && (input[j] === '"' || tokenChar.test(input[j]!))
  }
  const readQuoted = (): string | undefined => {
    i++ // opening quote
    let value = ""
    while (i < n) {
      const c = input[i]!
      if (c === "\\" && i + 1 < n) {
        value += input[i + 1]
        i += 2
      } else if (c === '"') {
        i++
        return value
      } else {
        value += c
        i++
      }
    }
    return undefined
  }
  skipSeparators()
  while (i < n) {
    const scheme = readToken()
    if (scheme === "") return out
    // No prototype: a parameter named `__proto__` or `constructor` is just a parameter.
    const challenge: Challenge = { scheme, params: Object.create(null), token68: undefined }
    out.push(challenge)
    skipSpace()
    if (i < n && input[i] !== "," && !paramAhead()) {
      // token68: its characters then any "=" padding.
      const start = i
      while (i < n && token68Char.test(input[i]!)) i++
      while (i < n && input[i] === "=") i++
      if (i === start) return out
      challenge.token68 = input.slice(start, i)
      skipSeparators()
      continue
    }
    skipSeparators()
    while (i < n && paramAhead()) {
      const name = readToken().toLowerCase()
      skipSpace()
      i++ // "="
      skipSpace()
      let value: string | undefined
      if (input[i] === '"') value = readQuoted()
      else value = readToken()
      if (value === undefined) return out
      if (!Object.hasOwn(challenge.params, name)) challenge.params[name] = value
      skipSeparators()
    }
  }
  return out
}
