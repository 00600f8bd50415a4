/**
 * A test OTLP/HTTP receiver: a node:http server on 127.0.0.1 (port 0) that
 * takes what exporters POST to `/v1/traces`, `/v1/metrics` and `/v1/logs`,
 * decodes it (OTLP/JSON, or protobuf read field by field after the
 * opentelemetry-proto definitions) and keeps the spans and metric points.
 * Owned by the test's scope. The protobuf side is written from the message
 * definitions, not from any encoder, so it checks what an exporter sends.
 */
import * as Http from "node:http"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { makeChanges, type Signal } from "./ServerProcess.ts"

/** A span as received: ids in lower-case hex, attributes flattened to plain values. */
export interface Span {
  readonly name: string
  readonly kind: number
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly attributes: Readonly<Record<string, unknown>>
  readonly resource: Readonly<Record<string, unknown>>
}

/** One data point of a received metric. */
export interface Point {
  readonly metric: string
  readonly type: "sum" | "gauge" | "histogram"
  readonly unit: string
  readonly attributes: Readonly<Record<string, unknown>>
  /** A sum's or gauge's value. */
  readonly value?: number
  /** A histogram's count and sum. */
  readonly count?: number
  readonly sum?: number
  readonly resource: Readonly<Record<string, unknown>>
}

/** One export request as received. */
export interface Request {
  readonly path: string
  readonly contentType: string
  readonly headers: Http.IncomingHttpHeaders
}

export interface Receiver {
  /** `http://127.0.0.1:<port>`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string
  readonly spans: () => ReadonlyArray<Span>
  readonly points: () => ReadonlyArray<Point>
  /** The requests received: path, content type and headers. */
  readonly requests: () => ReadonlyArray<Request>
  /** Requests that could not be decoded (their error messages): a test expects none. */
  readonly errors: () => ReadonlyArray<string>
  /** Fired after each request is recorded: what a test waits on (`ServerProcess.waitFor(..., received)`). */
  readonly received: Signal
}

// ---- protobuf wire format -------------------------------------------------------------------------

type FieldType =
  | "string"
  | "bytes"
  | "bool"
  | "int64"
  | "uint32"
  | "enum"
  | "fixed64"
  | "sfixed64"
  | "fixed32"
  | "double"
  | { readonly message: string }

interface FieldDef {
  readonly name: string
  readonly type: FieldType
  readonly repeated?: boolean
}

const m = (message: string) => ({ message })

/** The messages of opentelemetry-proto used by trace and metric exports: field number -> name and type. */
const messages: Record<string, Record<number, FieldDef>> = {
  ExportTraceServiceRequest: { 1: { name: "resourceSpans", type: m("ResourceSpans"), repeated: true } },
  ResourceSpans: {
    1: { name: "resource", type: m("Resource") },
    2: { name: "scopeSpans", type: m("ScopeSpans"), repeated: true },
    3: { name: "schemaUrl", type: "string" }
  },
  ScopeSpans: {
    1: { name: "scope", type: m("InstrumentationScope") },
    2: { name: "spans", type: m("Span"), repeated: true },
    3: { name: "schemaUrl", type: "string" }
  },
  Resource: {
    1: { name: "attributes", type: m("KeyValue"), repeated: true },
    2: { name: "droppedAttributesCount", type: "uint32" }
  },
  InstrumentationScope: {
    1: { name: "name", type: "string" },
    2: { name: "version", type: "string" },
    3: { name: "attributes", type: m("KeyValue"), repeated: true },
    4: { name: "droppedAttributesCount", type: "uint32" }
  },
  Span: {
    1: { name: "traceId", type: "bytes" },
    2: { name: "spanId", type: "bytes" },
    3: { name: "traceState", type: "string" },
    4: { name: "parentSpanId", type: "bytes" },
    5: { name: "name", type: "string" },
    6: { name: "kind", type: "enum" },
    7: { name: "startTimeUnixNano", type: "fixed64" },
    8: { name: "endTimeUnixNano", type: "fixed64" },
    9: { name: "attributes", type: m("KeyValue"), repeated: true },
    10: { name: "droppedAttributesCount", type: "uint32" },
    11: { name: "events", type: m("Event"), repeated: true },
    12: { name: "droppedEventsCount", type: "uint32" },
    13: { name: "links", type: m("Link"), repeated: true },
    14: { name: "droppedLinksCount", type: "uint32" },
    15: { name: "status", type: m("Status") },
    16: { name: "flags", type: "fixed32" }
  },
  Event: {
    1: { name: "timeUnixNano", type: "fixed64" },
    2: { name: "name", type: "string" },
    3: { name: "attributes", type: m("KeyValue"), repeated: true },
    4: { name: "droppedAttributesCount", type: "uint32" }
  },
  Link: {
    1: { name: "traceId", type: "bytes" },
    2: { name: "spanId", type: "bytes" },
    3: { name: "traceState", type: "string" },
    4: { name: "attributes", type: m("KeyValue"), repeated: true },
    5: { name: "droppedAttributesCount", type: "uint32" },
    6: { name: "flags", type: "fixed32" }
  },
  Status: { 2: { name: "message", type: "string" }, 3: { name: "code", type: "enum" } },
  KeyValue: { 1: { name: "key", type: "string" }, 2: { name: "value", type: m("AnyValue") } },
  AnyValue: {
    1: { name: "stringValue", type: "string" },
    2: { name: "boolValue", type: "bool" },
    3: { name: "intValue", type: "int64" },
    4: { name: "doubleValue", type: "double" },
    5: { name: "arrayValue", type: m("ArrayValue") },
    6: { name: "kvlistValue", type: m("KeyValueList") },
    7: { name: "bytesValue", type: "bytes" }
  },
  ArrayValue: { 1: { name: "values", type: m("AnyValue"), repeated: true } },
  KeyValueList: { 1: { name: "values", type: m("KeyValue"), repeated: true } },
  ExportMetricsServiceRequest: { 1: { name: "resourceMetrics", type: m("ResourceMetrics"), repeated: true } },
  ResourceMetrics: {
    1: { name: "resource", type: m("Resource") },
    2: { name: "scopeMetrics", type: m("ScopeMetrics"), repeated: true },
    3: { name: "schemaUrl", type: "string" }
  },
  ScopeMetrics: {
    1: { name: "scope", type: m("InstrumentationScope") },
    2: { name: "metrics", type: m("Metric"), repeated: true },
    3: { name: "schemaUrl", type: "string" }
  },
  Metric: {
    1: { name: "name", type: "string" },
    2: { name: "description", type: "string" },
    3: { name: "unit", type: "string" },
    5: { name: "gauge", type: m("Gauge") },
    7: { name: "sum", type: m("Sum") },
    9: { name: "histogram", type: m("Histogram") },
    12: { name: "metadata", type: m("KeyValue"), repeated: true }
  },
  Gauge: { 1: { name: "dataPoints", type: m("NumberDataPoint"), repeated: true } },
  Sum: {
    1: { name: "dataPoints", type: m("NumberDataPoint"), repeated: true },
    2: { name: "aggregationTemporality", type: "enum" },
    3: { name: "isMonotonic", type: "bool" }
  },
  Histogram: {
    1: { name: "dataPoints", type: m("HistogramDataPoint"), repeated: true },
    2: { name: "aggregationTemporality", type: "enum" }
  },
  NumberDataPoint: {
    7: { name: "attributes", type: m("KeyValue"), repeated: true },
    2: { name: "startTimeUnixNano", type: "fixed64" },
    3: { name: "timeUnixNano", type: "fixed64" },
    4: { name: "asDouble", type: "double" },
    6: { name: "asInt", type: "sfixed64" },
    8: { name: "flags", type: "uint32" }
  },
  HistogramDataPoint: {
    9: { name: "attributes", type: m("KeyValue"), repeated: true },
    2: { name: "startTimeUnixNano", type: "fixed64" },
    3: { name: "timeUnixNano", type: "fixed64" },
    4: { name: "count", type: "fixed64" },
    5: { name: "sum", type: "double" },
    6: { name: "bucketCounts", type: "fixed64", repeated: true },
    7: { name: "explicitBounds", type: "double", repeated: true },
    10: { name: "flags", type: "uint32" },
    11: { name: "min", type: "double" },
    12: { name: "max", type: "double" }
  }
}

class Reader {
  pos = 0
  readonly bytes: Uint8Array
  readonly end: number
  constructor(bytes: Uint8Array, end = bytes.length) {
    this.bytes = bytes
    this.end = end
  }
  varint(): bigint {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (this.pos >= this.end) throw new Error("truncated varint")
      const byte = this.bytes[this.pos++]!
      result |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return result
      shift += 7n
      if (shift > 63n) throw new Error("varint longer than 10 bytes")
    }
  }
  take(n: number): Uint8Array {
    if (this.pos + n > this.end) throw new Error("truncated field")
    const slice = this.bytes.subarray(this.pos, this.pos + n)
    this.pos += n
    return slice
  }
}

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
const safe = (value: bigint): number | string => (value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : `${value}`)
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

/** One scalar of `type` from `reader`, as OTLP/JSON writes it (bytes as hex, as JSON ids are). */
const scalar = (reader: Reader, wire: number, type: Exclude<FieldType, { message: string }>): unknown => {
  switch (type) {
    case "string":
      return new TextDecoder("utf-8", { fatal: true }).decode(reader.take(Number(reader.varint())))
    case "bytes":
      return hex(reader.take(Number(reader.varint())))
    case "bool":
      return reader.varint() !== 0n
    case "int64":
      return safe(BigInt.asIntN(64, reader.varint()))
    case "uint32":
    case "enum":
      return Number(reader.varint())
    case "fixed64":
      if (wire !== 1) throw new Error(`fixed64 with wire type ${wire}`)
      return safe(view(reader.take(8)).getBigUint64(0, true))
    case "sfixed64":
      if (wire !== 1) throw new Error(`sfixed64 with wire type ${wire}`)
      return safe(view(reader.take(8)).getBigInt64(0, true))
    case "fixed32":
      if (wire !== 5) throw new Error(`fixed32 with wire type ${wire}`)
      return view(reader.take(4)).getUint32(0, true)
    case "double":
      if (wire !== 1) throw new Error(`double with wire type ${wire}`)
      return view(reader.take(8)).getFloat64(0, true)
  }
}

const skip = (reader: Reader, wire: number) => {
  if (wire === 0) reader.varint()
  else if (wire === 1) reader.take(8)
  else if (wire === 2) reader.take(Number(reader.varint()))
  else if (wire === 5) reader.take(4)
  else throw new Error(`unknown wire type ${wire}`)
}

/** Decodes one message of type `name` into the object OTLP/JSON would carry. */
export const decodeMessage = (name: string, bytes: Uint8Array, reader = new Reader(bytes)): Record<string, unknown> => {
  const fields = messages[name]
  if (fields === undefined) throw new Error(`no definition of ${name}`)
  const result: Record<string, unknown> = {}
  while (reader.pos < reader.end) {
    const key = Number(reader.varint())
    const wire = key & 7
    const def = fields[key >>> 3]
    if (def === undefined) {
      skip(reader, wire)
      continue
    }
    const values: Array<unknown> = []
    if (typeof def.type === "object") {
      if (wire !== 2) throw new Error(`${name}.${def.name}: a message with wire type ${wire}`)
      const length = Number(reader.varint())
      const end = reader.pos + length
      if (end > reader.end) throw new Error(`${name}.${def.name}: truncated message`)
      const nested = new Reader(bytes, end)
      nested.pos = reader.pos
      values.push(decodeMessage(def.type.message, bytes, nested))
      reader.pos = end
    } else if (wire === 2 && def.repeated && def.type !== "string" && def.type !== "bytes") {
      // A packed run of scalars (proto3 packs repeated numbers).
      const length = Number(reader.varint())
      const packed = new Reader(bytes, reader.pos + length)
      packed.pos = reader.pos
      const elementWire = def.type === "double" || def.type === "fixed64" || def.type === "sfixed64" ? 1 : 0
      while (packed.pos < packed.end) values.push(scalar(packed, elementWire, def.type))
      reader.pos = packed.end
    } else {
      values.push(scalar(reader, wire, def.type))
    }
    if (def.repeated) result[def.name] = [...((result[def.name] as Array<unknown> | undefined) ?? []), ...values]
    else result[def.name] = values[0]
  }
  return result
}

// ---- OTLP/JSON-shaped objects to spans and points ------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: an export request is read loosely, field by field, as OTLP/JSON names them
type Json = Record<string, any>

const anyValue = (value: Json | undefined): unknown => {
  if (value === undefined) return undefined
  if ("stringValue" in value) return value.stringValue
  if ("boolValue" in value) return value.boolValue
  if ("intValue" in value) return Number(value.intValue)
  if ("doubleValue" in value) return Number(value.doubleValue)
  if ("arrayValue" in value) return ((value.arrayValue?.values ?? []) as Array<Json>).map(anyValue)
  if ("kvlistValue" in value) return attributes(value.kvlistValue?.values)
  if ("bytesValue" in value) return value.bytesValue
  return undefined
}

const attributes = (list: Array<Json> | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key as string, anyValue(kv.value)]))

/** JSON ids are hex already; protobuf ids were made hex by `scalar`. Empty when absent. */
const id = (value: unknown) => (typeof value === "string" ? value.toLowerCase() : "")

const spansOf = (request: Json): Array<Span> =>
  ((request.resourceSpans ?? []) as Array<Json>).flatMap((resourceSpans) => {
    const resource = attributes(resourceSpans.resource?.attributes)
    return ((resourceSpans.scopeSpans ?? []) as Array<Json>).flatMap((scope) =>
      ((scope.spans ?? []) as Array<Json>).map((span) => ({
        name: span.name as string,
        kind: Number(span.kind ?? 0),
        traceId: id(span.traceId),
        spanId: id(span.spanId),
        parentSpanId: id(span.parentSpanId),
        attributes: attributes(span.attributes),
        resource
      }))
    )
  })

const pointsOf = (request: Json): Array<Point> =>
  ((request.resourceMetrics ?? []) as Array<Json>).flatMap((resourceMetrics) => {
    const resource = attributes(resourceMetrics.resource?.attributes)
    return ((resourceMetrics.scopeMetrics ?? []) as Array<Json>).flatMap((scope) =>
      ((scope.metrics ?? []) as Array<Json>).flatMap((metric): Array<Point> => {
        const base = { metric: metric.name as string, unit: (metric.unit ?? "") as string, resource }
        if (metric.histogram !== undefined) {
          return ((metric.histogram.dataPoints ?? []) as Array<Json>).map((point) => ({
            ...base,
            type: "histogram" as const,
            attributes: attributes(point.attributes),
            count: Number(point.count ?? 0),
            sum: Number(point.sum ?? 0)
          }))
        }
        const data = metric.sum ?? metric.gauge
        if (data === undefined) return []
        return ((data.dataPoints ?? []) as Array<Json>).map((point) => ({
          ...base,
          type: metric.sum !== undefined ? ("sum" as const) : ("gauge" as const),
          attributes: attributes(point.attributes),
          value: Number(point.asDouble ?? point.asInt ?? 0)
        }))
      })
    )
  })

// ---- the server ------------------------------------------------------------------------------------------

const body = (request: Http.IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

const requestTypes: Record<string, string> = {
  "/v1/traces": "ExportTraceServiceRequest",
  "/v1/metrics": "ExportMetricsServiceRequest"
}

/** Starts a receiver in the test's scope; closing the scope closes it. */
export const start: Effect.Effect<Receiver, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() => {
    const spans: Array<Span> = []
    const points: Array<Point> = []
    const requests: Array<Request> = []
    const errors: Array<string> = []
    const received = makeChanges()
    const server = Http.createServer((request, response) => {
      // Whatever the request turned into (spans, points, an error), waiters look again once it is recorded.
      response.on("finish", received.notify)
      body(request).then(
        (bytes) => {
          const path = request.url ?? ""
          const contentType = request.headers["content-type"] ?? ""
          requests.push({ path, contentType, headers: request.headers })
          try {
            const type = requestTypes[path]
            if (type !== undefined) {
              const decoded = contentType.startsWith("application/json")
                ? (JSON.parse(bytes.toString("utf8")) as Json)
                : contentType.startsWith("application/x-protobuf")
                  ? decodeMessage(type, bytes)
                  : undefined
              if (decoded === undefined) throw new Error(`unexpected content type ${contentType} on ${path}`)
              if (path === "/v1/traces") spans.push(...spansOf(decoded))
              else points.push(...pointsOf(decoded))
            }
            response.writeHead(200, { "content-type": contentType || "application/json" })
            response.end(contentType.startsWith("application/json") ? "{}" : undefined)
          } catch (error) {
            errors.push(`${path}: ${String(error)}`)
            response.writeHead(400)
            response.end()
          }
        },
        (error) => {
          errors.push(String(error))
          response.writeHead(400)
          response.end()
        }
      )
    })
    return new Promise<{ server: Http.Server; receiver: Receiver }>((resolve) => {
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as { port: number }
        resolve({
          server,
          receiver: {
            endpoint: `http://127.0.0.1:${address.port}`,
            spans: () => spans,
            points: () => points,
            requests: () => requests,
            errors: () => errors,
            received
          }
        })
      })
    })
  }),
  ({ server }) =>
    Effect.promise(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
    )
).pipe(Effect.map(({ receiver }) => receiver))
