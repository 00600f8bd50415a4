// vitest does not read vitest.workspace.ts on its own; this file only forwards to it.
export { default } from "./vitest.workspace.ts"
