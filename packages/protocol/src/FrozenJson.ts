/**
 * Plain JSON values that can never change: deep-frozen, with data properties
 * only. A value a peer repeats on every message (a stateless request's
 * `_meta`, the capabilities it declares) can be made one of these once; a
 * receiver that remembered such a value knows an identical one is still
 * equal, without comparing it again (see `JsonEquality` for values that are
 * not).
 *
 * Plain JSON here is what `JsonEquality` compares: objects whose prototype is
 * `Object.prototype` or `null`, arrays, strings, finite numbers, booleans and
 * `null`, read through their own enumerable keys.
 */

import { isPlain } from "./internal/plain.ts"

// What is left of the current walk's bound (one walk at a time: each is synchronous).
let left = 0

const copyOf = (value: unknown): { readonly value: unknown } | undefined => {
  if (--left < 0) return undefined
  if (value === null || typeof value === "string" || typeof value === "boolean") return { value }
  if (typeof value === "number") return Number.isFinite(value) ? { value } : undefined
  if (typeof value !== "object") return undefined
  if (Array.isArray(value)) {
    const out: Array<unknown> = []
    for (const item of value) {
      const copied = copyOf(item)
      if (copied === undefined) return undefined
      out.push(copied.value)
    }
    return { value: Object.freeze(out) }
  }
  if (!isPlain(value)) return undefined
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const copied = copyOf((value as Record<string, unknown>)[key])
    if (copied === undefined) return undefined
    out[key] = copied.value
  }
  return { value: Object.freeze(out) }
}

const frozen = (value: unknown): boolean => {
  if (--left < 0) return false
  if (value === null || typeof value === "string" || typeof value === "boolean") return true
  if (typeof value === "number") return Number.isFinite(value)
  if (typeof value !== "object" || !Object.isFrozen(value)) return false
  if (!Array.isArray(value) && !isPlain(value)) return false
  for (const key of Object.keys(value)) {
    // A getter on a frozen object may still answer differently on each read.
    const descriptor = Object.getOwnPropertyDescriptor(value, key)
    if (descriptor === undefined || !("value" in descriptor) || !frozen(descriptor.value)) return false
  }
  return true
}

/**
 * A deep-frozen copy of a plain JSON value; undefined when the value is not
 * plain JSON, or once `maxValues` values were copied.
 *
 * @example
 * ```ts
 * import * as FrozenJson from "@effect-mcp/protocol/FrozenJson"
 *
 * const declared = { tools: { listChanged: true } }
 * const copy = FrozenJson.copy(declared)!.value // deep-frozen; `declared` unchanged
 * FrozenJson.isFrozen(copy) // true
 * FrozenJson.copy({ at: new Date() }) // undefined: not plain JSON
 * ```
 */
export const copy = (
  value: unknown,
  maxValues: number = Number.POSITIVE_INFINITY
): { readonly value: unknown } | undefined => {
  left = maxValues
  return copyOf(value)
}

/**
 * Whether `value` is plain JSON that can never change: every object and
 * array in it frozen, with data properties only. False once `maxValues`
 * values were looked at.
 */
export const isFrozen = (value: unknown, maxValues: number = Number.POSITIVE_INFINITY): boolean => {
  left = maxValues
  return frozen(value)
}
