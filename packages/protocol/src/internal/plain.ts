/**
 * A plain object as JSON makes it: its prototype is `Object.prototype` (or
 * `null`). Anything else (a class instance, a Date, a Map) is not plain JSON
 * data for `JsonEquality` and `FrozenJson`.
 */
export const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
