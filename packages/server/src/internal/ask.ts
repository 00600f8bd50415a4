/**
 * Asking the client, both ways: a server-to-client request on stateful
 * revisions, or an input request collected for an `input_required` result on
 * 2026-07-28 (see `inputRounds.ts`). What is common lives here: the
 * capability each ask needs, whether the revision has it, and the params as
 * the revision spells them.
 *
 * Loaded on the first ask (through `lazy.ts`), with the sampling schemas: a
 * server whose handlers never ask does not load them.
 */
import * as Features from "@effect-mcp/protocol/Features"
import type * as Revision from "@effect-mcp/protocol/Revision"
import * as Sampling from "@effect-mcp/protocol/Sampling"
import type * as Peer from "@effect-mcp/engine/Peer"
import type * as PeerError from "@effect-mcp/engine/PeerError"
import type * as Session from "@effect-mcp/engine/Session"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { type AskMethod, type AskOptions, ClientRequestError } from "../ServerRequest.ts"
import * as AskTask from "./askTask.ts"
import { declared } from "./capabilities.ts"

type Obj = { readonly [key: string]: unknown }

const nest = (path: ReadonlyArray<string>): Obj => path.reduceRight<Obj>((inner, key) => ({ [key]: inner }), {})

/** The capability path an ask needs from the client. */
const requiredPath = (method: AskMethod, params: Obj): ReadonlyArray<string> => {
  switch (method) {
    case "sampling/createMessage":
      return params.tools === undefined ? ["sampling"] : ["sampling", "tools"]
    case "roots/list":
      return ["roots"]
    case "elicitation/create":
      return params.mode === "url" ? ["elicitation", "url"] : ["elicitation"]
  }
}

/** Form elicitation: `elicitation: {}` means form; once modes are listed, `form` must be one of them. */
const formDeclared = (capabilities: Session.Capabilities): boolean => {
  const e = (capabilities as Obj).elicitation
  if (!Predicate.isObject(e)) return false
  const modes = e as Obj
  return (modes.form === undefined && modes.url === undefined) || declared(capabilities, ["elicitation", "form"])
}

export const capabilityError = (method: AskMethod, params: Obj, capabilities: Session.Capabilities) => {
  const path = requiredPath(method, params)
  const ok =
    method === "elicitation/create" && params.mode !== "url" ? formDeclared(capabilities) : declared(capabilities, path)
  if (ok) return undefined
  const required = path[0] === "elicitation" && path.length === 1 ? { elicitation: { form: {} } } : nest(path)
  return new ClientRequestError({
    reason: "CapabilityMissing",
    method,
    message: `${method}: the client did not declare capability ${path.join(".")}${path.length === 1 && method === "elicitation/create" ? " (form)" : ""}`,
    requiredCapabilities: required
  })
}

const notInRevision = (method: string, version: string, what: string) =>
  new ClientRequestError({
    reason: "NotInRevision",
    method,
    message: `${method}: ${what} is not part of protocol ${version}`
  })

/**
 * The params of an ask as `revision` spells them, or the reason it cannot be
 * asked there. `elicitationId` is generated for URL elicitations where the
 * revision needs one (2025-11-25).
 */
export const shapeParams = (
  revision: Revision.RevisionSpec,
  method: AskMethod,
  params: Obj,
  newId: () => string
): Obj | ClientRequestError => {
  const version = revision.version
  const known = revision.stateless ? revision.inputRequests.has(method) : revision.methods.has(method)
  if (!known) return notInRevision(method, version, method)
  let out: { [key: string]: unknown } = { ...params }
  if (revision.stateless) {
    // 2026-07-28 input requests carry no `_meta` nor `task`.
    delete out._meta
    delete out.task
  }
  if (method === "elicitation/create") {
    if (out.mode === "url") {
      if (!Features.has(version, "urlElicitation")) return notInRevision(method, version, "URL mode elicitation")
      if (Features.has(version, "elicitationComplete")) out.elicitationId ??= newId()
      else delete out.elicitationId
    } else {
      if (!Features.has(version, "urlElicitation")) delete out.mode
      const schema = out.requestedSchema as Obj | undefined
      if (schema?.$schema !== undefined && !Features.has(version, "jsonSchemaDialect")) {
        const { $schema: _, ...rest } = schema
        out.requestedSchema = rest
      }
    }
  }
  if (method === "sampling/createMessage") {
    if (out.tools !== undefined && !Features.has(version, "samplingTools")) {
      return notInRevision(method, version, "sampling with tools")
    }
    if (!Features.has(version, "samplingContentArrays")) {
      const messages: Array<unknown> = []
      for (const m of (out.messages ?? []) as ReadonlyArray<Sampling.SamplingMessage>) {
        const single = Sampling.singleBlock(m.content)
        if (single === undefined)
          return notInRevision(method, version, "a sampling message with several content blocks")
        messages.push({ ...m, content: single })
      }
      out = { ...out, messages }
    }
  }
  return out
}

/** The ask's failure as a `ClientRequestError` (what the session's request failed with). */
const requestError =
  (method: AskMethod, params: Obj) =>
  (error: Peer.CallError | PeerError.NotSupported): ClientRequestError => {
    switch (error._tag) {
      case "NotSupported":
        return new ClientRequestError({
          reason: error.reason === "CapabilityNotDeclared" ? "CapabilityMissing" : "NotInRevision",
          method,
          message: error.message,
          ...(error.reason === "CapabilityNotDeclared"
            ? { requiredCapabilities: nest(requiredPath(method, params)) }
            : {})
        })
      case "RequestTimeout":
        return new ClientRequestError({ reason: "Timeout", method, message: error.message, cause: error })
      case "SessionClosed":
      case "TransportError":
        return new ClientRequestError({ reason: "Closed", method, message: error.message, cause: error })
      default:
        return new ClientRequestError({
          reason: "Rejected",
          method,
          message: `${method} was rejected by the client: ${error.message}`,
          cause: error
        })
    }
  }

/**
 * A stateful ask: a request on the session, related to the incoming request
 * it serves (if any); run as a task on the client when the ask asks for one
 * and the client declared it can take one (see `askTask.ts`).
 */
export const viaSession = (
  session: Session.SessionShape,
  relatedRequestId: string | number | undefined,
  method: AskMethod,
  params: Obj,
  options?: AskOptions
): Effect.Effect<unknown, ClientRequestError> => {
  const toError = requestError(method, params)
  const send = (m: string, p: object, progress: boolean) =>
    Effect.mapError(
      session.request(m, p, {
        relatedRequestId,
        timeout: options?.timeout,
        onProgress: progress ? options?.onProgress : undefined,
        resetTimeoutOnProgress: progress && options?.onProgress !== undefined
      }),
      toError
    )
  const task = options?.task
  if (task !== undefined && task !== false && AskTask.clientTakes(session, method)) {
    return AskTask.run(session, method, params, task === true ? {} : task, send)
  }
  return send(method, params, true)
}
