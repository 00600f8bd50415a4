/**
 * Deterministic test kit of effect-mcp: a scripted JSON-RPC peer, fault
 * injection, the transport contract suite, connected session pairs, and an
 * in-memory span recorder.
 *
 * @packageDocumentation
 * @module @effect-mcp/testing
 */
export * as FaultTransport from "./FaultTransport.ts"
export * as McpTest from "./McpTest.ts"
export * as SessionPair from "./SessionPair.ts"
export * as SpanRecorder from "./SpanRecorder.ts"
export * as TestPeer from "./TestPeer.ts"
export * as TransportContract from "./TransportContract.ts"
