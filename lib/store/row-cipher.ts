/**
 * The two keyed operations of a store encrypted at rest, both synchronous:
 * they run inside IndexedDB transactions, which commit as soon as a task awaits
 * anything but IndexedDB (WebCrypto's promises would end them). So rows are
 * sealed with XChaCha20-Poly1305 and index values blinded with HMAC-SHA256 from
 * the audited pure-JS `@noble` libraries; the key itself is unwrapped once, at
 * open, with WebCrypto (at-rest-key.ts).
 *
 * - `seal`/`open`: authenticated encryption with additional data (AAD). A
 *   random 192-bit nonce per seal (XChaCha's nonce is long enough for random
 *   nonces to never repeat), stored in front of the ciphertext and tag.
 * - `blind`: a keyed hash standing in for a value in an index (equality
 *   lookups only): 128 bits of HMAC-SHA256, base64. Without the key nobody can
 *   test a guess against it. Cached: a store's vocabulary repeats.
 */
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { toBase64 } from '../util/web-crypto.js';

/** Bytes of each of the two keys (seal, blind). */
export const ROW_KEY_BYTES = 32;
const NONCE_BYTES = 24;
const TAG_BYTES = 16;
/** Nonces drawn from the system's generator at once (a call costs microseconds, more than a small seal). */
const NONCE_POOL = 256;
const BLIND_BYTES = 16;
/** Blinded values remembered; the cache is emptied when it is full. */
const BLIND_CACHE = 65_536;

/** Seals rows and blinds index values with one store's keys. */
export class RowCipher {
  readonly #sealKey: Uint8Array;
  readonly #blindKey: Uint8Array;
  /** HMAC with the key already absorbed: each blind value clones it (twice as fast as keying anew). */
  readonly #keyed: ReturnType<typeof hmac.create>;
  #pool = new Uint8Array(0);
  #used = 0;
  readonly #blinds = new Map<string, string>();
  readonly #encoder = new TextEncoder();

  /** `keys`: 64 bytes, the seal key then the blind key (copied; the caller wipes its own). */
  constructor(keys: Uint8Array) {
    this.#sealKey = keys.slice(0, ROW_KEY_BYTES);
    this.#blindKey = keys.slice(ROW_KEY_BYTES, 2 * ROW_KEY_BYTES);
    this.#keyed = hmac.create(sha256, this.#blindKey);
  }

  #nonce(): Uint8Array {
    if (this.#used === this.#pool.length) {
      this.#pool = crypto.getRandomValues(new Uint8Array(NONCE_BYTES * NONCE_POOL));
      this.#used = 0;
    }
    const nonce = this.#pool.subarray(this.#used, this.#used + NONCE_BYTES);
    this.#used += NONCE_BYTES;
    return nonce;
  }

  /** `plain` encrypted and authenticated together with `aad`: nonce, ciphertext and tag. */
  seal(plain: Uint8Array, aad: Uint8Array): Uint8Array {
    const nonce = this.#nonce();
    const sealed = xchacha20poly1305(this.#sealKey, nonce, aad).encrypt(plain);
    const out = new Uint8Array(NONCE_BYTES + sealed.length);
    out.set(nonce);
    out.set(sealed, NONCE_BYTES);
    return out;
  }

  /** The plain bytes of `sealed`, or undefined when it was not sealed with this key and this `aad` (or was changed). */
  open(sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) return undefined;
    try {
      return xchacha20poly1305(this.#sealKey, sealed.subarray(0, NONCE_BYTES), aad).decrypt(
        sealed.subarray(NONCE_BYTES),
      );
    } catch {
      return undefined;
    }
  }

  /**
   * The blind value of `value` in the index named `domain` (a table and field):
   * equal inputs give equal outputs, and the domain keeps the same word in two
   * indexes from linking them.
   */
  blind(domain: string, value: string): string {
    const input = `${domain}\u0000${value}`;
    let out = this.#blinds.get(input);
    if (out !== undefined) return out;
    out = toBase64(this.#keyed.clone().update(this.#encoder.encode(input)).digest().subarray(0, BLIND_BYTES));
    if (this.#blinds.size >= BLIND_CACHE) this.#blinds.clear();
    this.#blinds.set(input, out);
    return out;
  }

  /** Forgets the keys (close()). */
  wipe(): void {
    this.#sealKey.fill(0);
    this.#blindKey.fill(0);
    this.#keyed.destroy();
    this.#blinds.clear();
  }
}
