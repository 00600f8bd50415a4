/**
 * The method table of a revision, read off its schema: every `*Request` /
 * `*Notification` definition with a `method` const, who sends it (from the
 * `Client*` / `Server*` unions), its params schema and, for requests, the
 * result schema the spec pairs it with.
 */
import { isStructWithRest } from "./emit.ts"
import { deref, type Node, objectView, type Revision, refName, unionOrder } from "./spec.ts"

/** Requests the spec answers with `EmptyResult` (there is no `<Name>Result` definition for them). */
const emptyResultMethods = new Set(["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"])

const unions = new Set(["ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"])

export interface MethodRow {
  readonly kind: "request" | "notification" | "input"
  readonly method: string
  readonly definition: string
  readonly sender: "client" | "server" | "both"
  /** Source text of the params schema. */
  readonly params: string
  readonly paramsRequired: boolean
  /** Source text of the result schema (requests only). */
  readonly result?: string
}

const methodOf = (node: Node): string | undefined => {
  const method = node.properties?.["method"]?.const
  return typeof method === "string" ? method : undefined
}

/** The methods a `Client*` / `Server*` definition admits: a union of refs, or (2026-07-28) one inline message. */
const unionMethods = (rev: Revision, name: string): Set<string> => {
  const node = rev.defs.get(name)
  const out = new Set<string>()
  if (node === undefined) return out
  for (const member of node.anyOf ?? [node]) {
    const method = methodOf(deref(rev.defs, member))
    if (method === undefined) throw new Error(`${rev.version} ${name}: member without a method const`)
    out.add(method)
  }
  return out
}

export const deriveMethods = (rev: Revision): ReadonlyArray<MethodRow> => {
  const clientRequests = unionMethods(rev, "ClientRequest")
  const serverRequests = unionMethods(rev, "ServerRequest")
  const clientNotifications = unionMethods(rev, "ClientNotification")
  const serverNotifications = unionMethods(rev, "ServerNotification")
  const inputMethods = new Set<string>()
  const inputRequest = rev.defs.get("InputRequest")
  for (const member of inputRequest?.anyOf ?? []) inputMethods.add(methodOf(deref(rev.defs, member))!)

  const rows: Array<MethodRow> = []
  for (const [name, node] of rev.defs) {
    const isRequest = name.endsWith("Request")
    if ((!isRequest && !name.endsWith("Notification")) || unions.has(name)) continue
    const method = methodOf(node)
    if (method === undefined) continue
    const fromClient = (isRequest ? clientRequests : clientNotifications).has(method)
    const fromServer = (isRequest ? serverRequests : serverNotifications).has(method)
    const kind = isRequest ? (fromClient || fromServer ? "request" : "input") : "notification"
    if (kind === "input" && !inputMethods.has(method)) throw new Error(`${rev.version} ${name}: sent by nobody`)
    if (!isRequest && !fromClient && !fromServer) throw new Error(`${rev.version} ${name}: sent by nobody`)
    const sender = kind === "input" ? "server" : fromClient && fromServer ? "both" : fromClient ? "client" : "server"
    const paramsRequired = node.required?.includes("params") ?? false
    const row = { kind, method, definition: name, sender, params: paramsOf(rev, name, node), paramsRequired } as const
    rows.push(isRequest ? { ...row, result: resultOf(rev, name, method, node) } : row)
  }
  return rows
}

const paramsOf = (rev: Revision, name: string, node: Node): string => {
  const params = node.properties?.["params"]
  if (params === undefined) return "noParams"
  if (params.$ref !== undefined) return refName(params.$ref)
  // Inline params: reuse the very schema inside the message definition (one AST, one compiled decoder).
  const fields = isStructWithRest(rev, node) ? `${name}.schema.fields` : `${name}.fields`
  return node.required?.includes("params") ? `${fields}.params` : `${fields}.params.schema`
}

const resultOf = (rev: Revision, name: string, method: string, node: Node): string => {
  const base = name.slice(0, -"Request".length)
  const response = rev.defs.get(`${base}ResultResponse`)
  let result: string
  if (response !== undefined) {
    // 2026-07-28 names each response, and its `result` is the exact union allowed (e.g. with InputRequiredResult).
    const inner = response.properties!["result"]!
    result = inner.$ref !== undefined ? refName(inner.$ref) : `${base}ResultResponse.fields.result`
  } else if (rev.defs.has(`${base}Result`)) result = `${base}Result`
  else if (emptyResultMethods.has(method)) result = "EmptyResult"
  else throw new Error(`${rev.version} ${name}: no result definition`)
  if (!taskAugmentable(rev, node) || !rev.defs.has("CreateTaskResult")) return result
  // A request with `params.task` may instead be answered with CreateTaskResult (TaskAugmentedRequestParams).
  const members: ReadonlyArray<Node> = [{ $ref: `#/${result}` }, { $ref: "#/CreateTaskResult" }]
  const names = [result, "CreateTaskResult"]
  if (!result.match(/^[A-Za-z]+$/)) throw new Error(`${rev.version} ${name}: task result over an inline union`)
  return `Schema.Union([${unionOrder(rev.defs, members)
    .map((i) => names[i])
    .join(", ")}])`
}

const taskAugmentable = (rev: Revision, node: Node): boolean => {
  const params = node.properties?.["params"]
  if (params === undefined) return false
  const resolved = deref(rev.defs, params)
  const members = resolved.anyOf ?? [resolved]
  return members.some((m) => objectView(rev.defs, m)?.properties.has("task") ?? false)
}

/** A schema expression as a thunk, its definition names turned into calls of their builders. */
const thunk = (names: ReadonlySet<string>, expr: string): string =>
  `() => ${expr.replace(/(?<![.\w])[A-Za-z_]\w*(?![\w(])/g, (id) => (names.has(id) || id === "noParams" ? `${id}()` : id))}`

const row = (names: ReadonlySet<string>, r: MethodRow): string => {
  const fields = [
    `method: ${JSON.stringify(r.method)}`,
    `sender: ${JSON.stringify(r.sender)}`,
    `params: ${thunk(names, r.params)}`,
    `paramsRequired: ${r.paramsRequired}`
  ]
  if (r.result !== undefined) fields.push(`result: ${thunk(names, r.result)}`)
  return `  { ${fields.join(", ")} }`
}

export const emitMethods = (rev: Revision, rows: ReadonlyArray<MethodRow>): string => {
  const names = new Set(rev.defs.keys())
  const table = (kind: MethodRow["kind"]) =>
    rows
      .filter((r) => r.kind === kind)
      .map((r) => row(names, r))
      .join(",\n")
  const usesNoParams = rows.some((r) => r.params === "noParams")
  return [
    "// ---------------------------------------------------------------------------",
    "// Method table (read by Registry.ts)",
    "// ---------------------------------------------------------------------------",
    "",
    ...(usesNoParams
      ? [
          "/** Params of a method the spec gives no params: an empty object that may carry `_meta`. */",
          "const noParams = lazy(() => Schema.Struct({ _meta: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)) }))",
          ""
        ]
      : []),
    "/** JSON-RPC requests of this revision; each schema is built when first asked for. */",
    `export const requests: ReadonlyArray<WireRequest> = [\n${table("request")}\n]`,
    "",
    "/** JSON-RPC notifications of this revision. */",
    `export const notifications: ReadonlyArray<WireNotification> = [\n${table("notification")}\n]`,
    "",
    "/** Server-to-client requests carried inside an InputRequiredResult instead of as JSON-RPC requests. */",
    `export const inputRequests: ReadonlyArray<WireRequest> = [${rows.some((r) => r.kind === "input") ? `\n${table("input")}\n` : ""}]`,
    ""
  ].join("\n")
}
