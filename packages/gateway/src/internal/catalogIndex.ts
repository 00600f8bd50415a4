/**
 * The search index of the catalog's tools for discovery mode (see
 * `Discovery`): built once each time the tools change, so that a search reads
 * posting lists instead of every tool. Words are the lowercased runs of
 * letters and digits of a text, with camelCase split (`getWeather` is `get`,
 * `weather`); the index keeps each word's tools with the best field it
 * appears in, and its words sorted, so that a query word finds the words it
 * begins by binary search.
 */
import type * as Catalog from "@effect-mcp/host/Catalog"
import type * as Tools from "@effect-mcp/protocol/Tools"

/** A tool's fields, best first, with what a query word scores there: equal to a word of it, or the start of one. */
const fields = [
  { exact: 6, prefix: 3 }, // name
  { exact: 4, prefix: 2 }, // title
  { exact: 2, prefix: 1 }, // description
  { exact: 2, prefix: 1 } // upstream
] as const

/** What a query equal to a tool's whole name adds: it comes first whatever the other words score. */
const wholeName = 1_000

/** The words of a text. */
export const wordsOf = (text: string): ReadonlyArray<string> =>
  text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)

/** The index discovery mode searches now: the mirror replaces it each time the catalog's tools change. */
export interface Current {
  index: CatalogIndex
  /** Tools per `search_tools` page. */
  readonly pageSize: number
}

/** The index of one version of the catalog's tools. */
export interface CatalogIndex {
  /** The tools, sorted by name (a tool's id is its position). */
  readonly entries: ReadonlyArray<Catalog.Entry<Tools.Tool>>
  /** The tool of a catalog name. */
  readonly get: (name: string) => Catalog.Entry<Tools.Tool> | undefined
  /** The ids of the tools `query` matches, best first (ties by name); every tool, by name, for a blank query. */
  readonly search: (query: string) => ReadonlyArray<number>
}

// Names compare by UTF-16 code units: the same order on every machine, whatever its locale.
const byName = (a: Catalog.Entry<Tools.Tool>, b: Catalog.Entry<Tools.Tool>) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

/** The first position of `sorted` whose word is not before `word`. */
const lowerBound = (sorted: ReadonlyArray<string>, word: string): number => {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! < word) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Indexes the tools (the first of a repeated name only, as the catalog's names are unique). */
export const make = (tools: ReadonlyArray<Catalog.Entry<Tools.Tool>>): CatalogIndex => {
  const seen = new Set<string>()
  const entries = tools.filter((e) => !seen.has(e.name) && seen.add(e.name) !== undefined).sort(byName)
  const byNameMap = new Map<string, number>()
  const lowerNames = new Map<string, number>()
  // Per word: the tools it appears in, with the best field (a flat array of pairs: id, field).
  const postings = new Map<string, Array<number>>()
  entries.forEach((entry, id) => {
    byNameMap.set(entry.name, id)
    if (!lowerNames.has(entry.name.toLowerCase())) lowerNames.set(entry.name.toLowerCase(), id)
    const { title, description } = entry.item
    const best = new Map<string, number>()
    const texts = [entry.name, title ?? "", description ?? "", entry.server]
    texts.forEach((text, field) => {
      for (const word of wordsOf(text)) if (!best.has(word)) best.set(word, field)
    })
    for (const [word, field] of best) {
      let list = postings.get(word)
      if (list === undefined) {
        list = []
        postings.set(word, list)
      }
      list.push(id, field)
    }
  })
  const words = [...postings.keys()].sort()
  const lists = words.map((word) => postings.get(word)!)
  return {
    entries,
    get: (name) => {
      const id = byNameMap.get(name)
      return id === undefined ? undefined : entries[id]
    },
    search: (query) => {
      const terms = [...new Set(wordsOf(query))]
      if (terms.length === 0) return entries.map((_, id) => id)
      const score = new Float64Array(entries.length)
      const termScore = new Float64Array(entries.length)
      const touched: Array<number> = []
      for (const term of terms) {
        const hit: Array<number> = []
        for (let i = lowerBound(words, term); i < words.length && words[i]!.startsWith(term); i++) {
          const exact = words[i] === term
          const list = lists[i]!
          for (let j = 0; j < list.length; j += 2) {
            const id = list[j]!
            const weight = exact ? fields[list[j + 1]!]!.exact : fields[list[j + 1]!]!.prefix
            if (termScore[id] === 0) hit.push(id)
            if (weight > termScore[id]!) termScore[id] = weight
          }
        }
        // A word scores a tool once, at the best place it is found.
        for (const id of hit) {
          if (score[id] === 0) touched.push(id)
          score[id]! += termScore[id]!
          termScore[id] = 0
        }
      }
      const whole = lowerNames.get(query.trim().toLowerCase())
      if (whole !== undefined) {
        if (score[whole] === 0) touched.push(whole)
        score[whole]! += wholeName
      }
      // Ids are positions in name order: the lower id wins a tie.
      return touched.sort((a, b) => score[b]! - score[a]! || a - b)
    }
  }
}
