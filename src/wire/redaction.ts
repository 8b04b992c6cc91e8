/** Headers whose values are always secrets, whatever `secretHeaders` says. */
const alwaysSecret = ['authorization', 'cookie', 'proxy-authorization']
/** The default of `secretHeaders`: the usual names of API-key headers. */
export const defaultSecretHeaders: readonly string[] = ['x-api-key', 'api-key', 'x-auth-token']
/**
 * Values shorter than this are left alone: replacing every `1` of a message would garble it and hide no secret
 * (a credential is longer).
 */
const shortest = 4
const mask = '[redacted]'

/** Replaces every secret value in a text; see {@link createRedactor}. */
export type Redact = (text: string) => string

/**
 * What must never reach an error message or an event: the query values of the server URL (raw and decoded) and
 * the values of the secret headers of `requestInit.headers` (whole, and the credential after an auth scheme or a
 * cookie name, which a server may echo alone).
 */
export function createRedactor(url: URL, headers: HeadersInit | undefined, secretHeaders: readonly string[]): Redact {
  const secrets = new Set<string>()
  for (const [, value] of url.searchParams) secrets.add(value)
  for (const pair of url.search.slice(1).split('&')) secrets.add(pair.slice(pair.indexOf('=') + 1))
  const names = new Set([...alwaysSecret, ...secretHeaders.map((name) => name.toLowerCase())])
  for (const [name, value] of new Headers(headers)) {
    if (!names.has(name)) continue
    secrets.add(value)
    for (const part of value.split(/[;,]/)) secrets.add(part.trim().replace(/^[^\s=]+[\s=]+/, ''))
  }
  // Longest first, so that a secret containing another is masked whole.
  const ordered = [...secrets].filter((secret) => secret.length >= shortest).sort((a, b) => b.length - a.length)
  // Stryker disable next-line ConditionalExpression: no secret: the text is returned as it is
  if (ordered.length === 0) return (text) => text
  return (text) => ordered.reduce((masked, secret) => masked.split(secret).join(mask), text)
}

/** The server URL as messages show it: origin and path, the query's names without their values (a bare one masked whole). */
export function displayUrl(url: URL): string {
  const pairs = url.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '')
  const query = pairs.map((pair) => (pair.includes('=') ? `${pair.slice(0, pair.indexOf('='))}=${mask}` : mask))
  return `${url.origin}${url.pathname}${query.length === 0 ? '' : `?${query.join('&')}`}`
}
