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

  it("servers whose names make the same prefix get distinct ones, by the servers configured, connected or not", () => {
    const configured = ["svc one", "svc_one", "svc-one", "svc/one"]
    // svc_one keeps its own name; the others that become it are numbered in configuration order.
    assert.deepStrictEqual(
      [...Naming.prefixes(configured)],
      [
        ["svc_one", "svc_one"],
        ["svc-one", "svc-one"],
        ["svc one", "svc_one_2"],
        ["svc/one", "svc_one_3"]
      ]
    )
    // Whichever of them list something now, each keeps its name.
    assert.deepStrictEqual(Naming.assign([{ server: "svc_one", name: "echo" }], {}, configured), ["svc_one__echo"])
    assert.deepStrictEqual(Naming.assign([{ server: "svc one", name: "echo" }], {}, configured), ["svc_one_2__echo"])
    assert.deepStrictEqual(
      Naming.assign(
        [
          { server: "svc one", name: "echo" },
          { server: "svc_one", name: "echo" }
        ],
        {},
        configured
      ),
      ["svc_one_2__echo", "svc_one__echo"]
    )
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

  it("a server's tool never makes another server's name: a prefix neither holds the separator nor begins one", () => {
    const configured = ["a", "a__b", "x_", "x"]
    const hostile = { server: "a", name: "b__lookup" }
    const legit = { server: "a__b", name: "lookup" }
    // Before, both were a__b__lookup, and which server got the bare name went by order: a hostile server could
    // take a name a model had seen for another.
    for (const items of [
      [legit, hostile],
      [hostile, legit]
    ]) {
      const names = Naming.assign(items, {}, configured)
      assert.deepStrictEqual(Object.fromEntries(items.map((item, i) => [item.server, names[i]])), {
        a: "a__b__lookup",
        a__b: "a-b__lookup"
      })
    }
    // An end that begins the separator: x_ + __ would read as x + ___ .
    assert.deepStrictEqual(
      Naming.assign(
        [
          { server: "x_", name: "t" },
          { server: "x", name: "_t" }
        ],
        {},
        configured
      ),
      ["x-__t", "x___t"]
    )
    // The same with a separator of one's own, and the numbering of prefixes that meet stays clear of it.
    assert.deepStrictEqual(
      [...Naming.prefixes(["a.b", "a-b", "c"], ".")],
      [
        ["a-b", "a-b"],
        ["c", "c"],
        ["a.b", "a-b_2"]
      ]
    )
    assert.deepStrictEqual(
      [...Naming.prefixes(["p q", "p_q"], "_")],
      [
        ["p q", "p-q"],
        ["p_q", "p-q-2"]
      ]
    )
  })
})
