/**
 * The two keyed operations of a store encrypted at rest, both synchronous:
 * they run inside IndexedDB transactions, which commit as soon as a task awaits
 * anything but IndexedDB (WebCrypto's promises would end them). So rows are
 * sealed with XChaCha20-Poly1305 and index values blinded with HMAC-SHA256 from
 * the audited pure-JS `@noble` libraries; the key itself is unwrapped once, at
 * open, with WebCrypto (at-rest-key.ts).
 *
 * - `seal`/`open`: authenticated encryption with additional data (AAD). A
 *   192-bit nonce per seal, stored in front of the ciphertext and tag: a random
 *   128-bit prefix drawn once per cipher (each open store) and a 64-bit count
 *   of its seals, so nonces never repeat. XChaCha20 derives a subkey from the
 *   key and the nonce's first 128 bits (HChaCha20) and runs ChaCha20-Poly1305
 *   under it with the last 64: with one prefix per cipher the subkey is derived
 *   once, not twice per row (the bytes are those of XChaCha20-Poly1305 with the
 *   whole nonce, which any row sealed either way opens with). Opening derives
 *   it once per prefix met (rows written by one instance share it).
 * - `blind`: a keyed hash standing in for a value in an index (equality
 *   lookups only): 128 bits of HMAC-SHA256, base64. Without the key nobody can
 *   test a guess against it. Cached: a store's vocabulary repeats.
 */
import { chacha20poly1305, hchacha, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { toBase64 } from '../util/web-crypto.js';

/** Bytes of each of the two keys (seal, blind). */
export const ROW_KEY_BYTES = 32;
const NONCE_BYTES = 24;
const TAG_BYTES = 16;
/** The nonce's part that HChaCha20 reads (the subkey's input), then the part ChaCha20 reads. */
const PREFIX_BYTES = 16;
/** ChaCha20-Poly1305's nonce: 4 zero bytes, then the XChaCha nonce's last 8. */
const CHACHA_NONCE_BYTES = 12;
/** "expand 32-byte k", ChaCha's constant, as the little-endian words HChaCha20 takes. */
const SIGMA = /* @__PURE__ */ Uint32Array.of(0x61707865, 0x3320646e, 0x79622d32, 0x6b206574);
/** Subkeys kept for the prefixes met when opening (one per instance that wrote); emptied when full. */
const SUBKEY_CACHE = 256;
/** HChaCha20's words are read in place: true on every little-endian host (else XChaCha20 is called whole). */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const BLIND_BYTES = 16;
/** Blinded values remembered; the cache is emptied when it is full. */
const BLIND_CACHE = 65_536;

/** Seals rows and blinds index values with one store's keys. */
export class RowCipher {
  readonly #sealKey: Uint8Array;
  readonly #blindKey: Uint8Array;
  /** HMAC with the key already absorbed: each blind value clones it (twice as fast as keying anew). */
  readonly #keyed: ReturnType<typeof hmac.create>;
  /** This cipher's nonce prefix, its subkey, and how many seals it made. */
  readonly #prefix = crypto.getRandomValues(new Uint8Array(PREFIX_BYTES));
  readonly #subkey: Uint8Array;
  #count = 0;
  readonly #subkeys = new Map<string, Uint8Array>();
  readonly #blinds = new Map<string, string>();
  readonly #encoder = new TextEncoder();

  /** `keys`: 64 bytes, the seal key then the blind key (copied; the caller wipes its own). */
  constructor(keys: Uint8Array) {
    this.#sealKey = keys.slice(0, ROW_KEY_BYTES);
    this.#blindKey = keys.slice(ROW_KEY_BYTES, 2 * ROW_KEY_BYTES);
    this.#keyed = hmac.create(sha256, this.#blindKey);
    this.#subkey = this.#derive(this.#prefix);
  }

  /** HChaCha20 of the seal key and a nonce prefix: the key ChaCha20-Poly1305 runs under. */
  #derive(prefix: Uint8Array): Uint8Array {
    const key = new Uint32Array(this.#sealKey.buffer.slice(this.#sealKey.byteOffset, this.#sealKey.byteOffset + 32));
    const out = new Uint32Array(8);
    hchacha(SIGMA, key, new Uint32Array(prefix.slice().buffer), out);
    key.fill(0);
    return new Uint8Array(out.buffer);
  }

  /** The subkey of a prefix met when opening. */
  #subkeyOf(prefix: Uint8Array): Uint8Array {
    const name = String.fromCharCode(...prefix);
    let subkey = this.#subkeys.get(name);
    if (subkey === undefined) {
      if (this.#subkeys.size >= SUBKEY_CACHE) this.#wipeSubkeys();
      subkey = this.#derive(prefix);
      this.#subkeys.set(name, subkey);
    }
    return subkey;
  }

  #wipeSubkeys(): void {
    for (const subkey of this.#subkeys.values()) subkey.fill(0);
    this.#subkeys.clear();
  }

  /** `plain` encrypted and authenticated together with `aad`: nonce, ciphertext and tag. */
  seal(plain: Uint8Array, aad: Uint8Array): Uint8Array {
    const out = new Uint8Array(NONCE_BYTES + plain.length + TAG_BYTES);
    out.set(this.#prefix);
    // The count of seals, little-endian, in the nonce's last 8 bytes (2^53 seals before it would repeat).
    const view = new DataView(out.buffer);
    const n = this.#count++;
    view.setUint32(PREFIX_BYTES, n >>> 0, true);
    view.setUint32(PREFIX_BYTES + 4, Math.floor(n / 2 ** 32), true);
    const nonce = out.subarray(0, NONCE_BYTES);
    if (!LITTLE_ENDIAN) {
      out.set(xchacha20poly1305(this.#sealKey, nonce.slice(), aad).encrypt(plain), NONCE_BYTES);
      return out;
    }
    const short = new Uint8Array(CHACHA_NONCE_BYTES);
    short.set(nonce.subarray(PREFIX_BYTES), CHACHA_NONCE_BYTES - (NONCE_BYTES - PREFIX_BYTES));
    chacha20poly1305(this.#subkey, short, aad).encrypt(plain, out.subarray(NONCE_BYTES));
    return out;
  }

  /** The plain bytes of `sealed`, or undefined when it was not sealed with this key and this `aad` (or was changed). */
  open(sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) return undefined;
    try {
      if (!LITTLE_ENDIAN)
        return xchacha20poly1305(this.#sealKey, sealed.subarray(0, NONCE_BYTES), aad).decrypt(
          sealed.subarray(NONCE_BYTES),
        );
      const short = new Uint8Array(CHACHA_NONCE_BYTES);
      short.set(sealed.subarray(PREFIX_BYTES, NONCE_BYTES), CHACHA_NONCE_BYTES - (NONCE_BYTES - PREFIX_BYTES));
      return chacha20poly1305(this.#subkeyOf(sealed.subarray(0, PREFIX_BYTES)), short, aad).decrypt(
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
    this.#subkey.fill(0);
    this.#wipeSubkeys();
    this.#keyed.destroy();
    this.#blinds.clear();
  }
}
