/**
 * What the runtime suite's entries use of Bun's and Deno's own APIs, for tsc and the lint (neither runtime's types
 * are installed: `bun test` and `deno test --no-check` do not type-check).
 */
declare module 'bun:test' {
  export function describe(title: string, body: () => void): void
  export function test(title: string, body: () => Promise<void>, timeoutMs?: number): void
  export function beforeAll(body: () => Promise<void>): void
  export function afterAll(body: () => Promise<void>): void
}

declare namespace Deno {
  /** Each permission: granted (`true` or a list of what it is granted for) or refused (`false`). */
  interface PermissionOptionsObject {
    net?: boolean | string[]
    read?: boolean | string[]
    write?: boolean | string[]
    sys?: boolean | string[]
    run?: boolean | string[]
    env?: boolean | string[]
  }
  interface TestContext {
    step(name: string, fn: () => Promise<void>): Promise<boolean>
  }
  function test(definition: {
    name: string
    permissions: PermissionOptionsObject
    fn: (context: TestContext) => Promise<void>
  }): void
  function execPath(): string
}
