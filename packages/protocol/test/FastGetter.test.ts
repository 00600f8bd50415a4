import { assert, describe, it } from "@effect/vitest"
import * as FastGetter from "@effect-mcp/protocol/FastGetter"

const counter = () => {
  let count = 0
  return FastGetter.define({ increment: () => void count++ }, "count", () => count)
}

describe("FastGetter", () => {
  it("reads each object's own value, computed on every read", () => {
    const a = counter()
    const b = counter()
    a.increment()
    a.increment()
    b.increment()
    assert.strictEqual(a.count, 2)
    assert.strictEqual(b.count, 1)
    a.increment()
    assert.strictEqual(a.count, 3)
  })

  it("the getter is enumerable and the thunk is not: keys, spreads and JSON show the value only", () => {
    const a = counter()
    a.increment()
    assert.deepStrictEqual(Object.keys(a), ["increment", "count"])
    assert.strictEqual(Object.getOwnPropertySymbols(a).length, 1)
    assert.deepStrictEqual({ ...a }.count, 1)
    assert.deepStrictEqual(Object.getOwnPropertySymbols({ ...a }), [])
    assert.strictEqual(JSON.stringify(a), '{"count":1}')
  })

  it("objects given the same name share one getter; another name has its own", () => {
    const a = FastGetter.define({}, "x", () => 1)
    const b = FastGetter.define({}, "x", () => 2)
    const c = FastGetter.define({}, "y", () => 3)
    const getterOf = (o: object, name: string) => Object.getOwnPropertyDescriptor(o, name)!.get
    assert.strictEqual(getterOf(a, "x"), getterOf(b, "x"))
    assert.notStrictEqual(getterOf(a, "x"), getterOf(c, "y"))
    assert.deepStrictEqual([a.x, b.x, c.y], [1, 2, 3])
  })
})
