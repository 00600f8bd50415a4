/**
 * A notes server: tools (one with a typed failure, one with progress, three
 * that ask the client something), a resource, a resource template with
 * completion, and a prompt, all reading a `Notes` service the server Layer is
 * given.
 *
 *   node --conditions=@effect-mcp/source examples/notes-server.ts --stdio   # serve over stdio
 *   node --conditions=@effect-mcp/source examples/notes-server.ts           # check itself
 *
 * Without `--stdio` it spawns itself as a stdio server, connects an
 * `McpClient`, checks what the server lists and answers, and exits non-zero if
 * anything differs. Other examples import `NotesServer` or spawn this file.
 */
import * as assert from "node:assert/strict"
import { fileURLToPath } from "node:url"
import * as McpClient from "@effect-mcp/client/McpClient"
import * as NodeMcpServer from "@effect-mcp/platform-node/NodeMcpServer"
import * as NodeStdio from "@effect-mcp/platform-node/NodeStdio"
import type * as Tools from "@effect-mcp/protocol/Tools"
import * as Elicitation from "@effect-mcp/server/Elicitation"
import * as McpServer from "@effect-mcp/server/McpServer"
import * as Prompt from "@effect-mcp/server/Prompt"
import * as Resource from "@effect-mcp/server/Resource"
import * as ResourceTemplate from "@effect-mcp/server/ResourceTemplate"
import * as Roots from "@effect-mcp/server/Roots"
import * as Sampling from "@effect-mcp/server/Sampling"
import * as ServerRequest from "@effect-mcp/server/ServerRequest"
import * as Tool from "@effect-mcp/server/Tool"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

// --- The application's own service, which the handlers use -------------------------------------------------------

export interface Note {
  readonly id: string
  readonly title: string
  readonly body: string
}

export class Notes extends Context.Service<
  Notes,
  {
    readonly all: Effect.Effect<ReadonlyArray<Note>>
    readonly get: (id: string) => Effect.Effect<Note | undefined>
    readonly add: (title: string, body: string) => Effect.Effect<Note>
  }
>()("examples/Notes") {
  /** An in-memory store holding two notes. */
  static readonly layer = Layer.sync(Notes, () => {
    const notes = new Map<string, Note>([
      ["1", { id: "1", title: "groceries", body: "milk, eggs" }],
      ["2", { id: "2", title: "ideas", body: "an MCP server from Layers" }]
    ])
    return {
      all: Effect.sync(() => [...notes.values()]),
      get: (id) => Effect.sync(() => notes.get(id)),
      add: (title, body) =>
        Effect.sync(() => {
          const note = { id: String(notes.size + 1), title, body }
          notes.set(note.id, note)
          return note
        })
    }
  })
}

/** A typed failure the client sees with its fields (the tool declares it as its `failure` Schema). */
export class NoteNotFound extends Schema.TaggedError<NoteNotFound>()("NoteNotFound", { id: Schema.String }) {}

// --- Tools ----------------------------------------------------------------------------------------------------------

const addNote = Tool.make("add_note", {
  description: "Adds a note and returns its id",
  input: Schema.Struct({ title: Schema.String, body: Schema.String }),
  output: Schema.Struct({ id: Schema.String }),
  handler: ({ title, body }) =>
    Effect.map(
      Notes.use((notes) => notes.add(title, body)),
      (note) => ({ id: note.id })
    )
})

const getNote = Tool.make("get_note", {
  description: "Returns the body of a note",
  input: Schema.Struct({ id: Schema.String }),
  failure: NoteNotFound,
  handler: ({ id }) =>
    Effect.flatMap(
      Notes.use((notes) => notes.get(id)),
      (note) => (note === undefined ? Effect.fail(new NoteNotFound({ id })) : Effect.succeed(note.body))
    )
})

/**
 * Counts to `to`, one step every `stepMs`, reporting each step as progress.
 * When the client cancels, the handler's fiber is interrupted: the finalizer
 * below runs and says so on stderr (stdout carries the protocol).
 */
const countTo = Tool.make("count_to", {
  description: "Counts slowly, reporting progress",
  input: Schema.Struct({ to: Schema.Int, stepMs: Schema.Int }),
  handler: ({ to, stepMs }) =>
    Effect.gen(function* () {
      for (let i = 1; i <= to; i++) {
        yield* Effect.sleep(stepMs)
        yield* ServerRequest.progress({ progress: i, total: to, message: `step ${i}` })
      }
      return `counted to ${to}`
    }).pipe(Effect.onInterrupt(() => Effect.sync(() => process.stderr.write("count_to: interrupted\n"))))
})

/** Asks the client's model (sampling/createMessage). */
const summarize = Tool.make("summarize", {
  description: "Summarizes a note with the client's model",
  input: Schema.Struct({ id: Schema.String }),
  handler: ({ id }) =>
    Effect.gen(function* () {
      const note = yield* Notes.use((notes) => notes.get(id))
      const result = yield* Sampling.createMessage({
        messages: [{ role: "user", content: { type: "text", text: `Summarize: ${note?.body ?? ""}` } }],
        maxTokens: 50
      })
      return `summary: ${Sampling.text(result)}`
    })
})

/** Asks the user through the client (elicitation/create, a form built from a Schema). */
const confirmClear = Tool.make("confirm_clear", {
  description: "Asks the user to confirm before clearing the notes",
  input: Schema.Struct({}),
  handler: () =>
    Effect.map(
      Elicitation.form({ message: "Clear every note?", schema: Schema.Struct({ confirm: Schema.Boolean }) }),
      (answer) => (Elicitation.isAccepted(answer) && answer.content.confirm ? "cleared" : "kept")
    )
})

/** Asks the client for its roots (roots/list). */
const workspace = Tool.make("workspace", {
  description: "Lists the client's roots",
  input: Schema.Struct({}),
  handler: () => Effect.map(Roots.list, (roots) => roots.map((root) => root.uri).join(", "))
})

// --- Resources, templates, prompts ----------------------------------------------------------------------------------

/** Completion of a note id: the ids starting with what the user typed. */
const noteIds = (prefix: string) =>
  Effect.map(
    Notes.use((notes) => notes.all),
    (all) => all.map((n) => n.id).filter((id) => id.startsWith(prefix))
  )

const index = Resource.make({
  uri: "notes://index",
  name: "index",
  mimeType: "text/plain",
  read: Effect.map(
    Notes.use((notes) => notes.all),
    (all) => all.map((note) => `${note.id} ${note.title}`).join("\n")
  )
})

const note = ResourceTemplate.make({
  uriTemplate: "notes://{id}",
  name: "note",
  mimeType: "text/plain",
  complete: { id: (value) => noteIds(value) },
  read: ({ id }, uri) =>
    Effect.flatMap(
      Notes.use((notes) => notes.get(String(id))),
      (found) => (found === undefined ? Effect.fail(Resource.notFound(uri)) : Effect.succeed(found.body))
    )
})

const review = Prompt.make({
  name: "review",
  description: "Asks the model to review a note",
  arguments: { id: { required: true, description: "The note's id", complete: (value) => noteIds(value) } },
  handler: ({ id }) =>
    Effect.map(
      Notes.use((notes) => notes.get(id)),
      (found) => `Review this note: ${found?.body ?? "(none)"}`
    )
})

// --- The server -----------------------------------------------------------------------------------------------------

/**
 * The whole server as one Layer: each feature Layer registers its items with
 * the `McpServer` below it; `Notes` is provided to all of them. A page size of
 * 2 makes the client read `tools/list` in pages.
 */
export const NotesServer: Layer.Layer<McpServer.McpServer> = Layer.mergeAll(
  Tool.layer(addNote, getNote, countTo, summarize, confirmClear, workspace),
  Resource.layer(index),
  ResourceTemplate.layer(note),
  Prompt.layer(review)
).pipe(
  Layer.provideMerge(McpServer.layer({ name: "notes", version: "1.0.0", pageSize: 2 })),
  Layer.provide(Notes.layer)
)

/** This file, to spawn it as a stdio server (with this process's Node flags: the source condition in the repo). */
export const spawnArgs = [...process.execArgv, fileURLToPath(import.meta.url), "--stdio"]

const textOf = (result: Tools.CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join("")

/** Spawns this file as a stdio server and checks it through a client. */
const selfCheck = Effect.gen(function* () {
  const client = yield* McpClient.McpClient
  const tools = yield* Stream.runCollect(client.tools)
  yield* Console.log(`tools: ${tools.map((t) => t.name).join(", ")}`)
  assert.deepEqual(
    tools.map((t) => t.name),
    ["add_note", "confirm_clear", "count_to", "get_note", "summarize", "workspace"]
  )
  const added = yield* client.callTool("add_note", { title: "todo", body: "write docs" })
  yield* Console.log(`add_note: ${JSON.stringify(added.structuredContent)}`)
  assert.deepEqual(added.structuredContent, { id: "3" })
  const index = yield* client.readResource("notes://index")
  const indexText = index.contents[0] !== undefined && "text" in index.contents[0] ? index.contents[0].text : ""
  yield* Console.log(`notes://index: ${JSON.stringify(indexText)}`)
  assert.equal(indexText, "1 groceries\n2 ideas\n3 todo")
  const prompt = yield* client.getPrompt("review", { id: "3" })
  const message = prompt.messages[0]?.content
  assert.equal(message?.type === "text" ? message.text : undefined, "Review this note: write docs")
  const body = yield* client.callTool("get_note", { id: "1" })
  assert.equal(textOf(body), "milk, eggs")
  yield* Console.log("ok: notes-server")
}).pipe(
  Effect.provide(
    McpClient.layer({ clientInfo: { name: "notes-check", version: "1.0.0" } }).pipe(
      Layer.provide(NodeStdio.layerClient({ command: process.execPath, args: spawnArgs }))
    )
  )
)

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  NodeRuntime.runMain(process.argv.includes("--stdio") ? NodeMcpServer.serveStdio(NotesServer) : selfCheck)
}
