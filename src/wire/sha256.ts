import {sha256} from '@noble/hashes/sha2.js'
import {bytesToHex, utf8ToBytes} from '@noble/hashes/utils.js'

/**
 * SHA-256 of `text` (UTF-8), in hex. Synchronous, and there in insecure browser contexts too (a page over plain
 * HTTP), which `crypto.subtle` is not: for `digestArguments`, and for the store namespace of a URL with a query in a
 * page without Web Crypto, which loads it on first use (src/wire/namespace.ts).
 */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)))
}
