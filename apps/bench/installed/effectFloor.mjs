// The floor any Effect server starts from: the modules every effect-mcp server imports from effect itself
// (Effect, Layer, Schema and the Node runtime), then `initialize` answered with bare Node, no MCP library.
// effect-mcp echo minus this row is effect-mcp's own share of a cold start; this row minus the Node floor is
// effect's.
import "@effect/platform-node/NodeRuntime"
import "effect/Effect"
import "effect/Layer"
import "effect/Schema"
import { answerInitialize } from "./nodeFloor.mjs"

answerInitialize()
