import { assert, describe, it } from "@effect/vitest"
import type * as JsonRpc from "@effect-mcp/protocol/JsonRpc"
import { IdTable } from "../src/internal/idTable.ts"

interface Entry {
  readonly id: JsonRpc.RequestId
  readonly name: string
}

const entry = (id: JsonRpc.RequestId, name = `#${String(id)}`): Entry => ({ id, name })

describe("IdTable", () => {
  it("finds every entry by id wherever it is kept: apart, in the ring, or in the map", () => {
    const table = new IdTable<Entry>()
    // 1 is kept apart; 2..65 fill the ring's 64 slots (65 takes slot 1, which 1 did not); 66..70 find theirs taken.
    const entries = Array.from({ length: 70 }, (_, i) => entry(i + 1))
    for (const e of entries) table.add(e)
    assert.strictEqual(table.size, 70)
    for (const e of entries) assert.strictEqual(table.get(e.id), e)
    assert.isUndefined(table.get(71))
    assert.isUndefined(table.get(0))
    assert.isUndefined(table.get("1"))
  })

  it("keeps string ids, and numbers that share a slot, apart from each other", () => {
    const table = new IdTable<Entry>()
    const solo = entry(7)
    const ring = entry(8)
    const sameSlot = entry(8 + 64)
    const negative = entry(-56) // -56 & 63 === 8: the same slot again
    const text = entry("8")
    const fraction = entry(8.5)
    for (const e of [solo, ring, sameSlot, negative, text, fraction]) table.add(e)
    for (const e of [solo, ring, sameSlot, negative, text, fraction]) assert.strictEqual(table.get(e.id), e)
    assert.strictEqual(table.size, 6)
  })

  it("removes only the entry given, and a freed place is taken again", () => {
    const table = new IdTable<Entry>()
    const first = entry(1)
    const second = entry(2)
    const inMap = entry(66)
    table.add(first)
    table.add(second)
    table.add(inMap)
    // Another entry under a kept id is not removed in its place.
    table.remove(entry(2, "impostor"))
    table.remove(entry(66, "impostor"))
    table.remove(entry(1, "impostor"))
    assert.strictEqual(table.size, 3)
    table.remove(second)
    assert.isUndefined(table.get(2))
    assert.strictEqual(table.get(66), inMap)
    table.remove(first)
    table.remove(inMap)
    assert.strictEqual(table.size, 0)
    const again = entry(130) // slot 2, free again
    table.add(entry(129))
    table.add(again)
    assert.strictEqual(table.get(130), again)
    assert.strictEqual(table.size, 2)
  })

  it("takeAll hands out every entry, the one kept apart first, and leaves the table empty", () => {
    const table = new IdTable<Entry>()
    const entries = [entry(5), entry(6), entry(6 + 64), entry("x")]
    for (const e of entries) table.add(e)
    const taken = table.takeAll()
    assert.strictEqual(taken[0], entries[0])
    assert.sameMembers(taken, entries)
    assert.strictEqual(table.size, 0)
    for (const e of entries) assert.isUndefined(table.get(e.id))
    assert.deepStrictEqual(table.values(), [])
  })
})
