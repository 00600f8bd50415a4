export * as ProtocolVersion from "./ProtocolVersion.ts"
