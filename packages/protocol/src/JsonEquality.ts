/**
 * Equality of JSON values as a peer sends them: the same primitives, arrays
 * element by element, plain objects by their own keys whatever their order.
 * Anything that is not plain data (a class instance, a function) equals only
 * itself. Peers repeat what they declare (capabilities, client information,
 * a stateless request's `_meta`), and both the session and the validator ask
 * whether a value is one they already hold.
 */

import { isPlain } from "./internal/plain.ts"

// What is left of the current comparison's bound (one comparison at a time: it is synchronous).
let left = 0

const same = (a: unknown, b: unknown): boolean => {
  if (--left < 0) return false
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false
  let keys = 0
  for (const key in a) {
    if (!Object.hasOwn(a, key) || !Object.hasOwn(b, key)) return false
    if (!same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false
    keys++
  }
  for (const key in b) if (Object.hasOwn(b, key)) keys--
  return keys === 0
}

/**
 * Whether `a` and `b` are the same JSON value. With `maxValues`, false once
 * that many values were compared: the work a peer's input can cause is bounded.
 *
 * @example
 * ```ts
 * import * as JsonEquality from "@effect-mcp/protocol/JsonEquality"
 *
 * JsonEquality.equals({ a: [1, { b: true }] }, { a: [1, { b: true }] }) // true
 * JsonEquality.equals({ a: 1, b: 2 }, { b: 2, a: 1 }) // true: key order aside
 * JsonEquality.equals({ a: 1 }, { a: 1, b: undefined }) // false: another key
 * ```
 */
export const equals = (a: unknown, b: unknown, maxValues: number = Number.POSITIVE_INFINITY): boolean => {
  left = maxValues
  return same(a, b)
}
