/**
 * One kind of registered item (tools, resources, templates, prompts), kept
 * by key. Lists are served sorted by key (a stable, documented order that
 * also makes cursors robust to changes between pages); the sorted view is
 * rebuilt only after a change.
 */
import { compareKeys } from "./page.ts"

export interface Entry<A> {
  readonly key: string
  readonly item: A
}

export class Store<A> {
  private readonly entries = new Map<string, Entry<A>>()
  private sortedCache: ReadonlyArray<Entry<A>> | undefined

  get size(): number {
    return this.entries.size
  }

  get(key: string): Entry<A> | undefined {
    return this.entries.get(key)
  }

  /** Adds or replaces the item under `key`; returns the entry, which `remove` takes back. */
  put(key: string, item: A): Entry<A> {
    const entry = { key, item }
    this.entries.set(key, entry)
    this.sortedCache = undefined
    return entry
  }

  /** Removes `entry` if it is still the one registered under its key. */
  remove(entry: Entry<A>): boolean {
    if (this.entries.get(entry.key) !== entry) return false
    this.entries.delete(entry.key)
    this.sortedCache = undefined
    return true
  }

  sorted(): ReadonlyArray<Entry<A>> {
    this.sortedCache ??= [...this.entries.values()].sort((a, b) => compareKeys(a.key, b.key))
    return this.sortedCache
  }
}
