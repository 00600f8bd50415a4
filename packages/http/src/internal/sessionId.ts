/**
 * The id of an HTTP session (Streamable HTTP's `Mcp-Session-Id`, the legacy
 * SSE endpoint's `sessionId`): 128 random bits as hex, visible ASCII as the
 * spec requires, and unguessable, since knowing the id is the right to use
 * the session.
 */
import * as SecureRandom from "effect/crypto/SecureRandom"

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/** A new session id. */
export const newSessionId = (): string => hex(SecureRandom.randomBytesUnsafe(16))
