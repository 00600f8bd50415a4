/**
 * A {@link TokenStore} in a JSON file, for command-line hosts: a login
 * survives the process. The file is read once, on first use, and rewritten
 * (to a temporary file, then renamed, readable by its owner only) on every
 * change. A file that cannot be read or parsed counts as empty, and a write
 * that fails keeps the tokens in memory; both are logged as warnings that
 * name the path, never a token.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import { TokenStore, type TokenStoreShape, type Tokens } from "./TokenStore.ts"

const StoredTokens = Schema.Struct({
  accessToken: Schema.String,
  refreshToken: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.Number),
  scope: Schema.optional(Schema.Array(Schema.String)),
  tokenType: Schema.String,
  issuer: Schema.String,
  clientId: Schema.optional(Schema.String)
})

const File = Schema.Struct({ version: Schema.Literal(1), servers: Schema.Record(Schema.String, StoredTokens) })

const decodeFile = Schema.decodeUnknownEffect(Schema.fromJsonString(File))

/** A store kept in the file at `path`; needs a `FileSystem` (e.g. `NodeFileSystem.layer`). */
export const make = (path: string): Effect.Effect<TokenStoreShape, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const lock = yield* Semaphore.make(1)
    let servers: Map<string, Tokens> | undefined

    const load = Effect.gen(function* () {
      if (servers !== undefined) return servers
      const text = yield* fs.readFileString(path).pipe(Effect.option)
      const loaded = new Map<string, Tokens>()
      if (text._tag === "Some") {
        const file = yield* decodeFile(text.value).pipe(
          Effect.tapError(() => Effect.logWarning(`token store ${path} is not a token file; starting empty`)),
          Effect.option
        )
        if (file._tag === "Some") for (const [key, value] of Object.entries(file.value.servers)) loaded.set(key, value)
      }
      servers = loaded
      return loaded
    })

    const save = (current: Map<string, Tokens>) => {
      const temporary = `${path}.${crypto.randomUUID()}.tmp`
      const text = JSON.stringify({ version: 1, servers: Object.fromEntries(current) })
      return fs.writeFileString(temporary, text, { mode: 0o600 }).pipe(
        Effect.andThen(fs.rename(temporary, path)),
        Effect.catch(() => Effect.logWarning(`token store ${path} could not be written; tokens kept in memory`))
      )
    }

    const change = (update: (current: Map<string, Tokens>) => void) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const current = yield* load
          update(current)
          yield* save(current)
        })
      )

    return {
      get: (server) => lock.withPermits(1)(Effect.map(load, (current) => current.get(server))),
      set: (server, tokens) => change((current) => current.set(server, tokens)),
      remove: (server) =>
        change((current) => {
          current.delete(server)
        })
    }
  })

/** {@link make} as the {@link TokenStore}. */
export const layer = (path: string): Layer.Layer<TokenStore, never, FileSystem.FileSystem> =>
  Layer.effect(TokenStore, make(path))
