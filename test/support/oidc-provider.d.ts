// oidc-provider ships no type declarations; the tests use this much of it.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http"
  export interface ProviderInstance {
    callback(): (request: IncomingMessage, response: ServerResponse) => void
    on(event: string, listener: (...args: Array<unknown>) => void): void
    registerGrantType(
      name: string,
      handler: (ctx: {
        readonly oidc: { readonly params: unknown; readonly client: { readonly clientId: string } }
        body: unknown
      }) => Promise<void>,
      parameters?: ReadonlyArray<string>
    ): void
  }
  export const errors: {
    readonly InvalidTarget: new (description?: string) => Error
    readonly InvalidGrant: new (description?: string) => Error
  }
  const Provider: new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance
  export default Provider
}
