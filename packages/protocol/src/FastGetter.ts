/**
 * Getters on objects made by the hundred (a connected client, a tool) that
 * keep those objects' fast properties in V8.
 *
 * Why: an object literal with a getter is a dictionary, every read of it a
 * hash lookup. A getter added afterwards with `Object.defineProperty` keeps
 * the object fast only while every object given that getter gets the same
 * getter function: V8 shares one hidden class among them, and a different
 * function (a closure made per object) turns each object after the first
 * into a dictionary. So the getter here is one function per property name,
 * shared by every object, and what differs per object (the thunk that
 * computes the value) sits in a non-enumerable data property beside it.
 *
 * @example
 * ```ts
 * import * as FastGetter from "@effect-mcp/protocol/FastGetter"
 *
 * const makeCounter = () => {
 *   let count = 0
 *   const counter = { increment: () => void count++ }
 *   return FastGetter.define(counter, "count", () => count)
 * }
 * const counter = makeCounter()
 * counter.increment()
 * console.log(counter.count) // 1
 * ```
 */

interface Shared {
  /** Where each object keeps its thunk (a symbol: spreading or listing the object never shows it). */
  readonly key: symbol
  /** The getter every object with this property shares. */
  readonly get: (this: object) => unknown
}

const shared = new Map<string, Shared>()

const sharedFor = (name: string): Shared => {
  let entry = shared.get(name)
  if (entry === undefined) {
    const key = Symbol(`FastGetter ${name}`)
    entry = {
      key,
      get(this: object) {
        return (this as Record<symbol, () => unknown>)[key]!()
      }
    }
    shared.set(name, entry)
  }
  return entry
}

/**
 * Adds to `object` an enumerable getter `name` whose value is `thunk()`,
 * computed on each read, and returns the object. Objects given a getter of
 * the same name this way, their other properties alike, keep one hidden
 * class and fast properties (`Object.defineProperty` with a getter of their
 * own would make each one after the first a dictionary).
 */
export const define = <O extends object, K extends string, A>(
  object: O,
  name: K,
  thunk: () => A
): O & { readonly [P in K]: A } => {
  const { key, get } = sharedFor(name)
  Object.defineProperty(object, key, { value: thunk })
  return Object.defineProperty(object, name, { get, enumerable: true }) as O & { readonly [P in K]: A }
}
