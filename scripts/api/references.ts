/**
 * What declarations refer to in other modules (`scripts/apiReport.ts`): the names one module's normalised
 * statements take from others (imports they use, re-exports, `import("...")` types), and the statements of a
 * module that declare the names wanted from it, with what those use in turn.
 */
import { sortKey } from "./declarations.ts"

/** Names a module's declarations take from another module (`"all"`: `export * from`). */
export interface Reference {
  readonly specifier: string
  readonly names: ReadonlyArray<string> | "all"
}

// The names a type refers to: identifiers outside string literals, less property, parameter and method
// names (`name:`, `name?:`, `name(`: tsc prints no space there, and one before a conditional type's `:`).
const identifiers = (text: string): ReadonlySet<string> =>
  new Set(
    text
      .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, "")
      .replace(/[A-Za-z_$][\w$]*\??[:(]/g, "")
      .match(/[A-Za-z_$][\w$]*/g) ?? []
  )

const bindings = (list: string): ReadonlyArray<{ readonly imported: string; readonly local: string }> =>
  list
    .split(",")
    .map((binding) => binding.trim().replace(/^type\s+/, ""))
    .filter((binding) => binding !== "")
    .map((binding) => {
      const [imported, local] = binding.split(/\s+as\s+/)
      return { imported: imported!, local: local ?? imported! }
    })

const namespaceImport = /^import\s+(?:type\s+)?\*\s+as\s+([\w$]+)\s+from\s+"([^"]+)";$/
const namedImport = /^import\s+(?:type\s+)?(?:([\w$]+)\s*,\s*)?\{([^}]*)\}\s*from\s+"([^"]+)";$/
const defaultImport = /^import\s+(?:type\s+)?([\w$]+)\s+from\s+"([^"]+)";$/
const starExport = /^export\s+(?:type\s+)?\*\s+(?:as\s+[\w$]+\s+)?from\s+"([^"]+)";$/
const namedExport = /^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s+"([^"]+)";$/
const importType = /\bimport\(\s*"([^"]+)"\s*\)(?:\.([\w$]+))?/g

/**
 * What `statements` (one module's, normalised) take from other modules, given the statements kept
 * (`kept`): re-exports and `import("...")` types of the kept ones, and the imports whose bindings they use.
 * Returns the references and the import statements used.
 */
export const referencesOf = (
  statements: ReadonlyArray<string>,
  kept: ReadonlyArray<string>
): { readonly references: ReadonlyArray<Reference>; readonly imports: ReadonlySet<string> } => {
  const body = kept.filter((statement) => !statement.startsWith("import ")).join("\n")
  const used = identifiers(body)
  const references: Array<Reference> = []
  const imports = new Set<string>()
  // An import is kept when the kept statements use one of its bindings.
  const take = (statement: string, specifier: string, names: ReadonlyArray<string>) => {
    if (names.length === 0) return
    imports.add(statement)
    references.push({ specifier, names })
  }
  for (const statement of statements) {
    const namespace = namespaceImport.exec(statement)
    const named = namedImport.exec(statement)
    const byDefault = defaultImport.exec(statement)
    if (namespace !== null) {
      const member = new RegExp(`\\b${namespace[1]!.replace(/\$/g, "\\$")}\\.([\\w$]+)`, "g")
      take(statement, namespace[2]!, [...new Set(Array.from(body.matchAll(member), (m) => m[1]!))])
    } else if (named !== null) {
      const names = bindings(named[2]!)
        .filter((b) => used.has(b.local))
        .map((b) => b.imported)
      take(statement, named[3]!, named[1] !== undefined && used.has(named[1]) ? [...names, "default"] : names)
    } else if (byDefault !== null) {
      take(statement, byDefault[2]!, used.has(byDefault[1]!) ? ["default"] : [])
    }
  }
  for (const statement of kept) {
    const star = starExport.exec(statement)
    const named = namedExport.exec(statement)
    if (star !== null) references.push({ specifier: star[1]!, names: "all" })
    else if (named !== null) {
      references.push({ specifier: named[2]!, names: bindings(named[1]!).map((b) => b.imported) })
    }
    for (const m of statement.matchAll(importType)) {
      references.push({ specifier: m[1]!, names: m[2] === undefined ? "all" : [m[2]] })
    }
  }
  return { references, imports }
}

/**
 * The statements of a module (normalised) that declare `wanted` names, with the declarations of the
 * same module they use (transitively) and the imports those use; all of them for `"all"`.
 */
export const keptStatements = (
  statements: ReadonlyArray<string>,
  wanted: ReadonlySet<string> | "all"
): ReadonlyArray<string> => {
  if (wanted === "all") return statements
  const declared = new Map<string, Array<number>>()
  statements.forEach((statement, index) => {
    const key = sortKey(statement)
    if (key[0] !== 2) return
    const indexes = declared.get(key[1]) ?? []
    indexes.push(index)
    declared.set(key[1], indexes)
  })
  const names = new Set<string>()
  const kept = new Set<number>()
  const want = (name: string) => {
    if (names.has(name)) return
    names.add(name)
    for (const index of declared.get(name) ?? []) {
      kept.add(index)
      for (const used of identifiers(statements[index]!)) if (declared.has(used)) want(used)
    }
  }
  for (const name of wanted) want(name)
  // Export lists naming a wanted name: local (`export { a as b };`, keeping `a`) or from another module
  // (`export { b } from "./x.js";`); `export * from` whenever a wanted name is not declared here.
  const undeclared = [...wanted].some((name) => !declared.has(name))
  statements.forEach((statement, index) => {
    if (undeclared && starExport.test(statement)) kept.add(index)
    const list = /^export\s+(?:type\s+)?\{([^}]*)\}(\s*from\s+"[^"]+")?;$/.exec(statement)
    if (list === null) return
    for (const binding of bindings(list[1]!)) {
      if (!wanted.has(binding.local)) continue
      kept.add(index)
      if (list[2] === undefined) want(binding.imported)
    }
  })
  const body = statements.filter((_, index) => kept.has(index))
  const { imports } = referencesOf(statements, body)
  return statements.filter((statement, index) => kept.has(index) || imports.has(statement))
}
