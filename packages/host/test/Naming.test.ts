import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
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
    // a's x is offered by a alone (twice): the first stays bare, the repeat gets a's prefix, never c's x_2. b's
    // a__x is in a's names, so b's prefix goes before it.
    assert.deepStrictEqual(names, ["x", "a__x", "b__a__x", "x_2"])
    // A number given to a repeat is never one that a name listed further on has as it is.
    const twice = Naming.assign(["x", "x", "x_2", "x_2"].map((name) => ({ server: "a", name })))
    assert.deepStrictEqual(twice, ["a__x", "a__x_3", "a__x_2", "a__x_2_2"])
    assert.strictEqual(new Set(twice).size, twice.length)
  })

  it("onClash never leaves bare a name in another configured server's names, whatever is listed", () => {
    const configured = ["a", "b", "c"]
    const hostile = { server: "a", name: "b__x" }
    const x = { server: "b", name: "x" }
    const rival = { server: "c", name: "x" }
    // Before, a's b__x was bare: the name b__x was a's while b's x was alone (or b not connected), and once c
    // offered an x too, b__x went to whichever of a and b came first, the other getting b__x_2.
    const cases: ReadonlyArray<readonly [ReadonlyArray<Naming.Named>, Record<string, string>]> = [
      [[hostile], { a: "a__b__x" }],
      [[hostile, x], { a: "a__b__x", b: "x" }],
      [[hostile, x, rival], { a: "a__b__x", b: "b__x", c: "c__x" }],
      [[x, rival, hostile], { a: "a__b__x", b: "b__x", c: "c__x" }]
    ]
    for (const [items, expected] of cases) {
      const names = Naming.assign(items, { strategy: "onClash" }, configured)
      assert.deepStrictEqual(Object.fromEntries(items.map((item, i) => [item.server, names[i]])), expected)
    }
    // A name in a server's own names stays bare, and one moved out of the way clashes with no bare name.
    assert.deepStrictEqual(
      Naming.assign(
        [
          { server: "b", name: "b__x" },
          { server: "a", name: "b__x" }
        ],
        { strategy: "onClash" },
        configured
      ),
      ["b__x", "a__b__x"]
    )
    // A server configured under another prefix owns the names under that prefix.
    assert.deepStrictEqual(
      Naming.assign([{ server: "a", name: "svc_one_2__x" }], { strategy: "onClash" }, ["a", "svc_one", "svc one"]),
      ["a__svc_one_2__x"]
    )
  })

  it("property: over list changes, no catalog name is given to two servers but a bare name both list", () => {
    const part = fc.constantFrom("a", "b", "x", "_", "__", ".", "2", " ")
    const word = fc.array(part, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(""))
    const run = fc.record({
      configured: fc.uniqueArray(word, { minLength: 1, maxLength: 4 }),
      separator: fc.constantFrom("__", ".", "_"),
      strategy: fc.constantFrom<Naming.Strategy>("onClash", "always"),
      // Each snapshot: a listing (names may repeat) or undefined (not connected) for each configured server.
      snapshots: fc.array(fc.array(fc.option(fc.array(word, { maxLength: 4 }), { nil: undefined }), { maxLength: 4 }), {
        minLength: 1,
        maxLength: 6
      })
    })
    fc.assert(
      fc.property(run, ({ configured, separator, snapshots, strategy }) => {
        const prefixes = Naming.prefixes(configured, separator)
        const owner = (name: string) =>
          configured.find((server) => name.startsWith(`${prefixes.get(server)}${separator}`))
        const givenTo = new Map<string, Set<string>>()
        for (const snapshot of snapshots) {
          const items = configured.flatMap((server, i) => (snapshot[i] ?? []).map((name) => ({ server, name })))
          const names = Naming.assign(items, { strategy, separator }, configured)
          assert.strictEqual(new Set(names).size, names.length)
          names.forEach((name, i) => {
            // A name under a server's prefix is that server's, whichever others are listed or connected.
            const server = owner(name)
            if (server !== undefined)
              assert.strictEqual(items[i]!.server, server, `${name} given to ${items[i]!.server}`)
            const servers = givenTo.get(name) ?? new Set()
            servers.add(items[i]!.server)
            givenTo.set(name, servers)
          })
        }
        for (const [name, servers] of givenTo) {
          if (servers.size === 1) continue
          // Under onClash a bare name goes with whichever server alone lists it: only then may it change hands.
          assert.isUndefined(owner(name), `${name} given to ${[...servers].join(", ")}`)
          for (const server of servers) {
            const lists = snapshots.some((snapshot) => snapshot[configured.indexOf(server)]?.includes(name))
            assert.isTrue(lists, `${name} given to ${server}, which never listed it`)
          }
        }
      }),
      { numRuns: 1000 }
    )
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
