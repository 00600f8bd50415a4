/**
 * Partial structural matching of received frames, and short descriptions of
 * frames for failure messages.
 */
import * as Predicate from "effect/Predicate"

/**
 * Whether `value` matches `pattern`: every key of an object pattern must match
 * the value's member (extra members are allowed), arrays must have the same
 * length and match element by element, anything else compares with `Object.is`.
 * A pattern member `undefined` therefore asserts that the member is absent.
 */
export const matches = (pattern: unknown, value: unknown): boolean => {
  if (Array.isArray(pattern)) {
    return Array.isArray(value) && value.length === pattern.length && pattern.every((p, i) => matches(p, value[i]))
  }
  if (Predicate.isObject(pattern)) {
    if (!Predicate.isObject(value)) return false
    for (const key of Object.keys(pattern)) {
      if (!matches(pattern[key], value[key])) return false
    }
    return true
  }
  return Object.is(pattern, value)
}

const maxDescription = 400

/** A one-line rendering of a frame, cut short: frames can be megabytes long. */
export const describe = (value: unknown): string => {
  let text: string
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value))
  } catch {
    text = String(value)
  }
  return text.length > maxDescription ? `${text.slice(0, maxDescription)}… (${text.length} chars)` : text
}
