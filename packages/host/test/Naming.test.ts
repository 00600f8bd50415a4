import { assert, describe, it } from "@effect/vitest"
import * as Naming from "../src/Naming.ts"

const items = [
  { server: "a", name: "echo" },
  { server: "a", name: "add" },
  { server: "b", name: "echo" },
  { server: "my server", name: "list" }
]

describe("Naming", () => {
  it("always prefixes by default, with the server's unsafe characters replaced", () => {
    assert.deepStrictEqual(Naming.assign(items), ["a__echo", "a__add", "b__echo", "my_server__list"])
  })

  it("onClash prefixes only the names several servers offer", () => {
    assert.deepStrictEqual(Naming.assign(items, { strategy: "onClash" }), ["a__echo", "add", "b__echo", "list"])
  })

  it("a separator or a format of one's own", () => {
    assert.deepStrictEqual(Naming.assign(items.slice(0, 2), { separator: "." }), ["a.echo", "a.add"])
    assert.deepStrictEqual(Naming.assign(items.slice(0, 2), { format: (server, name) => `${name}@${server}` }), [
      "echo@a",
      "add@a"
    ])
  })

  it("names that would still repeat are numbered in order, never reusing a name taken", () => {
    const names = Naming.assign(
      [
        { server: "a", name: "x" },
        { server: "a", name: "x" },
        { server: "b", name: "a__x" },
        { server: "c", name: "x_2" }
      ],
      { strategy: "onClash" }
    )
    // a's x is offered by a alone (twice), so it stays bare and the repeat is numbered past c's x_2.
    assert.deepStrictEqual(names, ["x", "x_3", "a__x", "x_2"])
    assert.strictEqual(new Set(names).size, names.length)
  })
})
