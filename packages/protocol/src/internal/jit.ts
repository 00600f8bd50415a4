/**
 * Which message schemas get effect's JIT schema compiler: those decoded on
 * every message (see Registry.ts). Kept here, apart from the registry, so a
 * schema derived from a compiled one (the validator's params without their
 * `_meta`, internal/repeatedMeta.ts) is compiled too: an interpreted decode
 * of a struct costs several times a generated one.
 */
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as SchemaAST from "effect/SchemaAST"
import type { AnyCodec } from "../Revision.ts"

const compiled = new WeakSet<SchemaAST.AST>()

/**
 * Enables the JIT compiler for `schema`, decoding and encoding (encoding runs
 * on the flipped AST, which differs when a schema carries checks). Enabling
 * must happen before any decode through the schema captures an interpreted
 * parser.
 */
export const compile = <S extends AnyCodec>(schema: S): S => {
  for (const ast of [schema.ast, SchemaAST.flip(schema.ast)]) {
    if (compiled.has(ast)) continue
    compiled.add(ast)
    SchemaJITCompiler.enable(ast)
  }
  return schema
}

/** Whether `schema` was compiled by `compile`. */
export const isCompiled = (schema: AnyCodec): boolean => compiled.has(schema.ast)
