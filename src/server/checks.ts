/** Option checks of `mcp-resumable-http/server`: each refusal a TypeError naming the option and what it accepts. */

/** `value` as an error message shows it, without running anything of it. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null)
    return String(value)
  return typeof value
}

/** Throws unless `options` is an object holding none but the `known` keys. */
export function checkKeys(options: unknown, known: readonly string[], where: string): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${where}: options must be an object, got ${shown(options)}`)
  const unknown = Object.keys(options).filter((key) => !known.includes(key))
  if (unknown.length > 0)
    throw new TypeError(`${where}: unknown option ${unknown.join(', ')} (the options are ${known.join(', ')})`)
}

/** `value`, or `fallback` when undefined; throws unless it is a positive safe integer. */
export function positiveInteger(value: unknown, fallback: number, where: string, name: string): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`${where}: options.${name} must be a positive integer, got ${shown(value)}`)
  }
  return value
}

/** Throws unless `value` is one of `choices`; `fallback` when undefined. */
export function oneOf<T extends string>(
  value: unknown,
  choices: readonly T[],
  fallback: T,
  where: string,
  name: string,
): T {
  if (value === undefined) return fallback
  if (!choices.includes(value as T))
    throw new TypeError(
      `${where}: options.${name} must be ${choices.map((choice) => `'${choice}'`).join(' or ')}, got ${shown(value)}`,
    )
  return value as T
}
