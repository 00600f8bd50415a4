/**
 * What a receiving process knows of the owners' direct hops: a target read
 * from a `Locate` answer or a session's row, remembered per shard, forgotten when its owner
 * refuses (the shard moved) or cannot be reached (every shard of that owner,
 * then known as gone until a next owner names itself);
 * and the owner's check of the secret a hop carries.
 */
import { assert, describe, it } from "@effect/vitest"
import * as DirectHop from "../src/DirectHop.ts"
import { Hops } from "../src/internal/hops.ts"

describe("direct hops", () => {
  it("carries a target in one string, and reads nothing from a malformed one", () => {
    const target = { origin: "http://10.0.0.5:3000", secret: "abc_-" }
    assert.deepStrictEqual(DirectHop.decodeTarget(DirectHop.encodeTarget(target)), target)
    assert.isUndefined(DirectHop.decodeTarget(undefined))
    assert.isUndefined(DirectHop.decodeTarget("no-space"))
    assert.isUndefined(DirectHop.decodeTarget(" http://h:1"))
  })

  it("believes only the exact secret", () => {
    assert.isTrue(DirectHop.isSecret("s3cret", "s3cret"))
    for (const given of [undefined, "", "s3cre", "s3cret!", "S3cret", "s3creu"]) {
      assert.isFalse(DirectHop.isSecret("s3cret", given), String(given))
    }
  })

  it("remembers the owner of each shard until it refuses or cannot be reached", () => {
    const hops = new Hops()
    const a = { origin: "http://127.0.0.1:1", secret: "a" }
    const b = { origin: "http://127.0.0.1:2", secret: "b" }
    hops.learn("default:1", DirectHop.encodeTarget(a))
    hops.learn("default:2", DirectHop.encodeTarget(a))
    hops.learn("default:3", DirectHop.encodeTarget(b))
    // A reply without a hop (an owner that offers none) changes nothing.
    hops.learn("default:3", undefined)
    assert.deepStrictEqual(hops.get("default:3"), b)
    hops.refused("default:1")
    assert.isUndefined(hops.get("default:1"))
    assert.deepStrictEqual(hops.get("default:2"), a)
    hops.unreachable(a.origin)
    assert.isUndefined(hops.get("default:2"))
    assert.deepStrictEqual(hops.get("default:3"), b)
  })

  it("does not read the rows of a shard whose owner could not be reached until its next owner names itself", () => {
    const hops = new Hops()
    const a = { origin: "http://127.0.0.1:1", secret: "a" }
    const b = { origin: "http://127.0.0.1:2", secret: "b" }
    hops.learn("default:1", DirectHop.encodeTarget(a))
    hops.learn("default:2", DirectHop.encodeTarget(b))
    assert.isTrue(hops.mayName("default:1"))
    hops.unreachable(a.origin)
    // The rows of shard 1 still name its lost owner until the next one reopens them: it is located instead.
    assert.isFalse(hops.mayName("default:1"))
    assert.isTrue(hops.mayName("default:2"))
    hops.learn("default:1", DirectHop.encodeTarget(b))
    assert.isTrue(hops.mayName("default:1"))
    assert.deepStrictEqual(hops.get("default:1"), b)
  })

  it("reads a shard's rows for a holder until one names none, and again once an owner names itself", () => {
    const hops = new Hops()
    assert.isTrue(hops.mayName("1"))
    hops.noName("1")
    assert.isFalse(hops.mayName("1"))
    assert.isTrue(hops.mayName("2"))
    hops.learn("1", DirectHop.encodeTarget({ origin: "http://127.0.0.1:1", secret: "a" }))
    assert.isTrue(hops.mayName("1"))
    // Its owner gone: nothing to read until the next owner names itself.
    hops.unreachable("http://127.0.0.1:1")
    assert.isFalse(hops.mayName("1"))
  })
})
