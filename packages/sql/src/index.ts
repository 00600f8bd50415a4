/**
 * Durable stores of effect-mcp on `effect/sql`: SQLite (Node's built-in `node:sqlite`, embedded) or
 * PostgreSQL. Nothing here is loaded by a server that keeps its state in memory.
 *
 * @packageDocumentation
 * @module @effect-mcp/sql
 */
export * as NodeSqlite from "./NodeSqlite.ts"
export * as SqlDatabase from "./SqlDatabase.ts"
export * as SqlEventStore from "./SqlEventStore.ts"
export * as SqlTaskStore from "./SqlTaskStore.ts"
