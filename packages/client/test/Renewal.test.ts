/**
 * The wait before a new session after one the server ended: none after a
 * session that lived a second or more (a server restart), else 250 ms,
 * doubling with each such short session in a row, at most 5 s. What the
 * waits do against a server that ends every new session at once is tested
 * with the real CLI in test/cli/Renewal.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Connection from "../src/internal/connection.ts"

describe("renewing an ended session", () => {
  it("waits longer after each session that lived less than a second, up to 5 s", () => {
    const waits = [0, 1, 2, 3, 4, 5, 6, 7].map((quick) => Duration.toMillis(Connection.renewalDelay(quick)))
    assert.deepStrictEqual(waits, [0, 250, 500, 1000, 2000, 4000, 5000, 5000])
  })
})
