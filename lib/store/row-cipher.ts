/**
 * The two keyed operations of a store encrypted at rest, both synchronous:
 * they run inside IndexedDB transactions, which commit as soon as a task awaits
 * anything but IndexedDB (WebCrypto's promises would end them). So rows are
 * sealed with XChaCha20-Poly1305 from libsodium (its own WebAssembly build,
 * `libsodium-wrappers`, loaded once before the first cipher is made: {@link RowCipher.create})
 * and index values blinded with HMAC-SHA256 from the audited pure-JS `@noble`
 * hashes; the key itself is unwrapped once, at open, with WebCrypto (at-rest-key.ts).
 * libsodium seals a row of a few hundred bytes 4-5x faster than `@noble/ciphers`
 * did and makes the same bytes (test/store/row-cipher.test.ts checks both ways),
 * so rows sealed before open unchanged (bench/results/REPORT.md, "at-rest").
 *
 * - `seal`/`open`: authenticated encryption with additional data (AAD). A
 *   192-bit nonce per seal, stored in front of the ciphertext and tag: a random
 *   128-bit prefix drawn once per cipher (each open store) and a 64-bit count
 *   of its seals, so nonces never repeat. Any row sealed with XChaCha20-Poly1305
 *   under this key opens, whatever its nonce.
 * - `blind`: a keyed hash standing in for a value in an index (equality
 *   lookups only): 128 bits of HMAC-SHA256, base64. Without the key nobody can
 *   test a guess against it. Cached: a store's vocabulary repeats.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { StoreError } from '../errors.js';
import { toBase64 } from '../util/web-crypto.js';

/** Bytes of each of the two keys (seal, blind). */
export const ROW_KEY_BYTES = 32;
const NONCE_BYTES = 24;
const TAG_BYTES = 16;
/** The nonce's random part, drawn once per cipher; the count of its seals follows. */
const PREFIX_BYTES = 16;
const BLIND_BYTES = 16;
/** Blinded values remembered; the cache is emptied when it is full. */
const BLIND_CACHE = 65_536;

/** What the cipher uses of libsodium. */
interface Aead {
  crypto_aead_xchacha20poly1305_ietf_encrypt(
    message: Uint8Array,
    additional: Uint8Array,
    secretNonce: null,
    nonce: Uint8Array,
    key: Uint8Array,
  ): Uint8Array;
  crypto_aead_xchacha20poly1305_ietf_decrypt(
    secretNonce: null,
    sealed: Uint8Array,
    additional: Uint8Array,
    nonce: Uint8Array,
    key: Uint8Array,
  ): Uint8Array;
}

let loading: Promise<Aead> | undefined;

/** libsodium, loaded (and its WebAssembly compiled) once per page; a failed load is tried again next time. */
function loadAead(): Promise<Aead> {
  loading ??= import('libsodium-wrappers').then(
    async ({ default: sodium }) => {
      await sodium.ready;
      return sodium;
    },
    (e: unknown) => {
      loading = undefined;
      throw new StoreError(
        `the at-rest cipher (libsodium) did not load: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    },
  );
  return loading;
}

/** Seals rows and blinds index values with one store's keys. */
export class RowCipher {
  readonly #aead: Aead;
  readonly #sealKey: Uint8Array;
  readonly #blindKey: Uint8Array;
  /** HMAC with the key already absorbed: each blind value clones it (twice as fast as keying anew). */
  readonly #keyed: ReturnType<typeof hmac.create>;
  /** This cipher's nonce prefix, and how many seals it made. */
  readonly #prefix = crypto.getRandomValues(new Uint8Array(PREFIX_BYTES));
  #count = 0;
  readonly #blinds = new Map<string, string>();
  readonly #encoder = new TextEncoder();

  /**
   * A cipher of `keys`: 64 bytes, the seal key then the blind key (copied; the caller wipes its own).
   * @example
   * const cipher = await RowCipher.create(keys);
   * cipher.open(cipher.seal(bytes, aad), aad); // bytes
   */
  static async create(keys: Uint8Array): Promise<RowCipher> {
    return new RowCipher(await loadAead(), keys);
  }

  private constructor(aead: Aead, keys: Uint8Array) {
    this.#aead = aead;
    this.#sealKey = keys.slice(0, ROW_KEY_BYTES);
    this.#blindKey = keys.slice(ROW_KEY_BYTES, 2 * ROW_KEY_BYTES);
    this.#keyed = hmac.create(sha256, this.#blindKey);
  }

  /** `plain` encrypted and authenticated together with `aad`: nonce, ciphertext and tag. */
  seal(plain: Uint8Array, aad: Uint8Array): Uint8Array {
    const nonce = new Uint8Array(NONCE_BYTES);
    nonce.set(this.#prefix);
    // The count of seals, little-endian, in the nonce's last 8 bytes (2^53 seals before it would repeat).
    const view = new DataView(nonce.buffer);
    const n = this.#count++;
    view.setUint32(PREFIX_BYTES, n >>> 0, true);
    view.setUint32(PREFIX_BYTES + 4, Math.floor(n / 2 ** 32), true);
    const sealed = this.#aead.crypto_aead_xchacha20poly1305_ietf_encrypt(plain, aad, null, nonce, this.#sealKey);
    const out = new Uint8Array(NONCE_BYTES + sealed.length);
    out.set(nonce);
    out.set(sealed, NONCE_BYTES);
    return out;
  }

  /** The plain bytes of `sealed`, or undefined when it was not sealed with this key and this `aad` (or was changed). */
  open(sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) return undefined;
    try {
      return this.#aead.crypto_aead_xchacha20poly1305_ietf_decrypt(
        null,
        sealed.subarray(NONCE_BYTES),
        aad,
        sealed.subarray(0, NONCE_BYTES),
        this.#sealKey,
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
