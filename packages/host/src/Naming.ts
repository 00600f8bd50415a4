/**
 * How the host names the tools and prompts of several servers in one
 * catalog. Two servers may offer a tool of the same name (two instances of
 * one server always do), so a catalog name is the server's name, a
 * separator and the tool's name: `files__read`.
 *
 * - `"always"` (the default) prefixes every name: a name never changes when
 *   another server comes, goes or adds a tool, which matters to a model that
 *   already saw the list.
 * - `"onClash"` keeps a name as the server gave it unless another server
 *   offers the same one; then each of them is prefixed.
 *
 * Either way the result is collision-safe. Characters a tool name may not
 * hold (anything but letters, digits, `_`, `-` and `.`) are replaced by `_`
 * in the server's part; two servers whose names then make the same prefix
 * (`svc one` and `svc_one`) get distinct ones (`svc_one_2`), numbered over
 * every configured server whether or not it is connected, so a name never
 * moves to another server. Nor can a server's tool take another server's
 * name: a prefix never holds the separator, nor ends with what begins it
 * (server `a__b` is prefixed `a-b`, `x_` is `x-`), so the first separator in
 * a prefixed name is where its server's part ends (server `a` listing
 * `b__lookup` cannot make the name of server `a__b`'s `lookup`), and under
 * `"onClash"` a name beginning with another configured server's prefix and
 * the separator is never left bare: server `a`'s `b__x` is `a__b__x`
 * whatever is listed or connected, so it never takes the name `b__x` that
 * server `b`'s `x` gets once another server offers an `x` too. A name a
 * server lists twice keeps it for its first use; the repeat gets its
 * server's prefix (unless it has it already) and, if that is taken, `_2`,
 * `_3`, ... in order, so it never takes a name another server may list.
 * `format` replaces the prefixing altogether, and with it these guarantees:
 * it alone then keeps one server's names from making another's.
 */

/** When names get the server's prefix. */
export type Strategy = "always" | "onClash"

/** How catalog names are made. */
export interface Options {
  /** Default `"always"`. */
  readonly strategy?: Strategy | undefined
  /** Between the server's name and the tool's. Default `"__"`. */
  readonly separator?: string | undefined
  /** Makes the prefixed name instead of `server + separator + name`. */
  readonly format?: ((server: string, name: string) => string) | undefined
}

/** One name to place: the server offering it and the name it gave. */
export interface Named {
  readonly server: string
  readonly name: string
}

const unsafe = /[^A-Za-z0-9_.-]/g

/** What replaces what may not stay in a prefix: a character the separator does not hold. */
const fillerOf = (separator: string): string => ["-", ".", "_"].find((c) => !separator.includes(c)) ?? "x"

/**
 * Whether the separator, put after `prefix`, first shows where it was put:
 * then a prefixed name says where its server's part ends.
 */
const endsAtSeparator = (prefix: string, separator: string): boolean =>
  separator === "" || `${prefix}${separator}`.indexOf(separator) === prefix.length

/**
 * The server's name as a tool-name prefix: unsafe characters replaced by
 * `_`, and the separator (default `__`) neither in it nor begun by its end
 * (each such part made of a character the separator does not hold).
 */
export const prefixOf = (server: string, separator = "__"): string => {
  let prefix = server.replace(unsafe, "_")
  if (endsAtSeparator(prefix, separator)) return prefix
  const filler = fillerOf(separator)
  // Joined with a character the separator lacks, no occurrence is left; an end that begins one loses its last.
  prefix = prefix.split(separator).join(filler)
  return endsAtSeparator(prefix, separator) ? prefix : `${prefix.slice(0, -1)}${filler}`
}

/**
 * Each server's prefix, unique among `servers` (a configuration's, in its
 * order): a server whose name is safe as it is keeps it; another whose
 * name becomes a prefix already taken gets `_2`, `_3`, ... in the order
 * given. It depends on the servers given alone: whichever of them are
 * connected, a server has the same prefix.
 */
export const prefixes = (servers: ReadonlyArray<string>, separator = "__"): ReadonlyMap<string, string> => {
  const result = new Map<string, string>()
  const taken = new Set<string>()
  // Names that need no change first: a server is never renamed for another's sake.
  for (const server of servers) {
    if (prefixOf(server, separator) === server) {
      result.set(server, server)
      taken.add(server)
    }
  }
  const mark = endsAtSeparator("x_2", separator) ? "_" : fillerOf(separator)
  for (const server of servers) {
    if (result.has(server)) continue
    const prefix = prefixOf(server, separator)
    let unique = prefix
    for (let n = 2; taken.has(unique); n++) unique = `${prefix}${mark}${n}`
    result.set(server, unique)
    taken.add(unique)
  }
  return result
}

/**
 * The catalog name of each item, in the same order: unique, prefixed as
 * `options.strategy` says (see the module description). `configured` are every
 * configured server in configuration order, which makes their prefixes
 * unique (see `prefixes`) and marks out the names each of them owns; default:
 * the servers of `items`, in their order.
 */
export const assign = (
  items: ReadonlyArray<Named>,
  options: Options = {},
  configured: ReadonlyArray<string> = items.map((item) => item.server)
): ReadonlyArray<string> => {
  const separator = options.separator ?? "__"
  const unique = options.format === undefined ? prefixes(configured, separator) : undefined
  const prefix = (server: string): string => unique?.get(server) ?? prefixOf(server, separator)
  const format = options.format ?? ((server: string, name: string) => `${prefix(server)}${separator}${name}`)
  const always = (options.strategy ?? "always") === "always"
  // Every configured server's prefix, connected or not (and those of servers listing without being configured).
  const owners = new Set<string>(unique?.values())
  if (unique !== undefined) for (const item of items) owners.add(prefix(item.server))
  // The prefix of the server whose names `name` is in (its prefix, the separator, anything), if any. A prefix
  // neither holds the separator nor ends with what begins it, so the first separator in `name` is where it would
  // end, and no more than one server owns a name. With a `format` of one's own no name is owned.
  const ownerOf = (name: string): string | undefined => {
    const end = separator === "" ? -1 : name.indexOf(separator)
    return end >= 0 && owners.has(name.slice(0, end)) ? name.slice(0, end) : undefined
  }
  const owner = items.map((item) => ownerOf(item.name))
  const foreign = items.map((item, i) => owner[i] !== undefined && owner[i] !== prefix(item.server))
  const servers = new Map<string, Set<string>>()
  if (!always) {
    for (const [i, item] of items.entries()) {
      // A name in another server's names is prefixed whatever is listed, so it clashes with no bare one.
      if (foreign[i]) continue
      const offering = servers.get(item.name) ?? new Set<string>()
      offering.add(item.server)
      servers.set(item.name, offering)
    }
  }
  const bare = items.map((item, i) => !always && !foreign[i] && (servers.get(item.name)?.size ?? 0) <= 1)
  const candidates = items.map((item, i) => (bare[i] ? item.name : format(item.server, item.name)))
  // Every candidate is kept for its first use: a numbered repeat never takes one listed further on.
  const taken = new Set<string>(candidates)
  const seen = new Set<string>()
  return candidates.map((candidate, i) => {
    if (!seen.has(candidate)) {
      seen.add(candidate)
      return candidate
    }
    // Only one server's items repeat a name (unless `format` makes the same name for two): a bare repeat not
    // already in its server's names is given its server's prefix, so its number stays in them instead of
    // taking a bare name another server may list later.
    const item = items[i]!
    const base = bare[i] && owner[i] === undefined ? format(item.server, item.name) : candidate
    let name = base
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`
    taken.add(name)
    return name
  })
}
