import {sha256} from '@noble/hashes/sha2.js'
import {bytesToHex, utf8ToBytes} from '@noble/hashes/utils.js'

/** Hex digits of the query digest kept in a namespace: 128 bits, no collision between two endpoints. */
const digestLength = 32

/**
 * Where the records of one endpoint (and one `storeKey`) live in the store. Origin and path, then a digest of
 * the query when there is one: endpoints that differ only in their query (`?token=ALICE`, `?token=BOB`) never
 * share a session or a cursor, and the store never holds a query value. Synchronous (no `crypto.subtle`, which is
 * async and missing from insecure browser contexts), so the namespace is known at construction.
 */
export function storeNamespace(url: URL, storeKey: string | undefined): string {
  const query = url.search === '' ? '' : `?sha256=${bytesToHex(sha256(utf8ToBytes(url.search))).slice(0, digestLength)}`
  return `mcp-resumable-http:${url.origin}${url.pathname}${query}${storeKey === undefined ? '' : `#${storeKey}`}`
}
