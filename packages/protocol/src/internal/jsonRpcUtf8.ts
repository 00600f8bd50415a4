/**
 * UTF-8 coders shared by the codec and the NDJSON splitter. The package
 * compiles without DOM or Node typings (`"types": []`), so the two globals are
 * declared here with just the members used; at runtime they are the
 * platform's own (every runtime effect supports has them).
 */

declare const TextDecoder: new (
  label: "utf-8",
  options: { readonly fatal: boolean; readonly ignoreBOM: boolean }
) => { decode(input: Uint8Array): string }

declare const TextEncoder: new () => { encode(input: string): Uint8Array }

/**
 * Fatal: invalid UTF-8 throws instead of becoming U+FFFD. A leading BOM is
 * kept, so the codec alone decides about it, the same way for text and bytes.
 */
export const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

export const utf8Encoder = new TextEncoder()

/** Lenient: invalid or cut UTF-8 becomes U+FFFD (for describing bytes, never for decoding frames). */
export const lenientUtf8Decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true })
