/**
 * One kind of registered item (tools, resources, templates, prompts), kept
 * by key with the services of the code that registered it. Lists are served
 * sorted by key (a stable, documented order that also makes cursors robust
 * to changes between pages); the sorted view is rebuilt only after a change.
 */
import type * as Context from "effect/Context"
import { compareKeys } from "./page.ts"

/** A registered item: its key, the item, and the services its handlers run with. */
export interface Entry<A> {
  readonly key: string
  readonly item: A
  /** The services of the code that registered it (what its handlers need). */
  readonly context: Context.Context<never>
}

export class Store<A> {
  private readonly entries = new Map<string, Entry<A>>()
  private sortedCache: ReadonlyArray<Entry<A>> | undefined
  private listedCache: ReadonlyArray<Entry<A>> | undefined

  get size(): number {
    return this.entries.size
  }

  get(key: string): Entry<A> | undefined {
    return this.entries.get(key)
  }

  /** Adds or replaces the item under `key`; returns the entry, which `remove` takes back. */
  put(key: string, item: A, context: Context.Context<never>): Entry<A> {
    // One object per registered item: it is the store's entry and what handlers run with.
    const entry = { key, item, context }
    this.entries.set(key, entry)
    this.sortedCache = undefined
    this.listedCache = undefined
    return entry
  }

  /** Removes `entry` if it is still the one registered under its key. */
  remove(entry: Entry<A>): boolean {
    if (this.entries.get(entry.key) !== entry) return false
    this.entries.delete(entry.key)
    this.sortedCache = undefined
    this.listedCache = undefined
    return true
  }

  sorted(): ReadonlyArray<Entry<A>> {
    this.sortedCache ??= [...this.entries.values()].sort((a, b) => compareKeys(a.key, b.key))
    return this.sortedCache
  }

  /** `sorted()` without the items registered as unlisted (`listed: false`: found by key, not in lists). */
  listed(): ReadonlyArray<Entry<A>> {
    if (this.listedCache === undefined) {
      const sorted = this.sorted()
      const unlisted = (e: Entry<A>) => (e.item as { readonly listed?: unknown }).listed === false
      this.listedCache = sorted.some(unlisted) ? sorted.filter((e) => !unlisted(e)) : sorted
    }
    return this.listedCache
  }
}
