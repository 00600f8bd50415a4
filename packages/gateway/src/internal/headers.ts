/** The headers the gateway sends an upstream: the configured ones, with its credential in place. */

/** `headers` with `name: value` in place of any header of the same name (header names are case-insensitive). */
export const withHeader = (
  headers: { readonly [name: string]: string } | undefined,
  name: string,
  value: string
): { readonly [name: string]: string } => {
  const out: { [name: string]: string } = {}
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() !== name.toLowerCase()) out[k] = v
  out[name] = value
  return out
}
