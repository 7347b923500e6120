/**
 * The two keyed operations of a store encrypted at rest, both synchronous:
 * they run inside IndexedDB transactions, which commit as soon as a task awaits
 * anything but IndexedDB (WebCrypto's promises would end them). Both run in
 * libsodium's own WebAssembly build (`libsodium-wrappers`, loaded once before
 * the first cipher is made: {@link RowCipher.create}), called directly on its
 * memory: each cipher keeps its keys and a scratch area there, so a row costs
 * no allocation in the module and no copy beyond its bytes going in and out
 * (the wrappers' own functions allocate and copy each argument on every call;
 * bench/results/REPORT.md, "at-rest", session 40). The key itself is unwrapped
 * once, at open, with WebCrypto (at-rest-key.ts).
 *
 * - `seal`/`open`: XChaCha20-Poly1305 with additional data (AAD). A
 *   192-bit nonce per seal, stored in front of the ciphertext and tag: a random
 *   128-bit prefix drawn once per cipher (each open store) and a 64-bit count
 *   of its seals, so nonces never repeat. Any row sealed with XChaCha20-Poly1305
 *   under this key opens, whatever its nonce (test/store/row-cipher.test.ts
 *   checks both ways against `@noble/ciphers`).
 * - `blind`: a keyed hash standing in for a value in an index (equality
 *   lookups only): 128 bits of HMAC-SHA256, base64. Without the key nobody can
 *   test a guess against it. libsodium's HKDF-SHA256 extract step is exactly
 *   HMAC-SHA256 keyed by its salt; the keyed state is made once and copied for
 *   each value. Cached: a store's vocabulary repeats.
 *
 * Plain bytes put in the module's memory are zeroed once sealed or opened;
 * `wipe` zeroes the keys and frees the cipher's memory.
 */
import { StoreError } from '../errors.js';
import { toBase64 } from '../util/web-crypto.js';

/** Bytes of each of the two keys (seal, blind). */
export const ROW_KEY_BYTES = 32;
const NONCE_BYTES = 24;
const TAG_BYTES = 16;
/** The nonce's random part, drawn once per cipher; the count of its seals follows. */
const PREFIX_BYTES = 16;
const BLIND_BYTES = 16;
const MAC_BYTES = 32;
/** Blinded values remembered per domain; a domain's cache is emptied when it is full. */
const BLIND_CACHE = 65_536;
/** The scratch area a cipher starts with; it grows to the largest row, up to {@link SCRATCH_KEPT}. */
const SCRATCH_START = 16 * 1024;
/** Larger scratch areas are freed after the call that needed them. */
const SCRATCH_KEPT = 1024 * 1024;

/** Additional data: bytes, or a string taken as its UTF-8 bytes. */
export type Aad = Uint8Array | string;

/** The most bytes `aad` takes (UTF-8 takes at most 3 bytes per UTF-16 code unit). */
function aadBytes(aad: Aad): number {
  return typeof aad === 'string' ? 3 * aad.length : aad.length;
}

/**
 * What the cipher calls of libsodium's WebAssembly module (libsodium-wrappers' `libsodium`).
 * Pointers are offsets into `HEAPU8`; a 64-bit length is passed as two 32-bit halves (low, high).
 */
interface SodiumModule {
  HEAPU8: Uint8Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  _crypto_aead_xchacha20poly1305_ietf_encrypt(
    c: number,
    clenP: number,
    m: number,
    mlenLow: number,
    mlenHigh: number,
    ad: number,
    adlenLow: number,
    adlenHigh: number,
    nsec: number,
    npub: number,
    k: number,
  ): number;
  _crypto_aead_xchacha20poly1305_ietf_decrypt(
    m: number,
    mlenP: number,
    nsec: number,
    c: number,
    clenLow: number,
    clenHigh: number,
    ad: number,
    adlenLow: number,
    adlenHigh: number,
    npub: number,
    k: number,
  ): number;
  _crypto_kdf_hkdf_sha256_statebytes(): number;
  _crypto_kdf_hkdf_sha256_extract_init(state: number, salt: number, saltLength: number): number;
  _crypto_kdf_hkdf_sha256_extract_update(state: number, input: number, inputLength: number): number;
  _crypto_kdf_hkdf_sha256_extract_final(state: number, out: number): number;
}

const CALLED: readonly (keyof SodiumModule)[] = [
  '_malloc',
  '_free',
  '_crypto_aead_xchacha20poly1305_ietf_encrypt',
  '_crypto_aead_xchacha20poly1305_ietf_decrypt',
  '_crypto_kdf_hkdf_sha256_statebytes',
  '_crypto_kdf_hkdf_sha256_extract_init',
  '_crypto_kdf_hkdf_sha256_extract_update',
  '_crypto_kdf_hkdf_sha256_extract_final',
];

let loading: Promise<SodiumModule> | undefined;

function loadFailed(detail: string, cause?: unknown): StoreError {
  return new StoreError(`the at-rest cipher (libsodium) did not load: ${detail}`, { cause });
}

/** libsodium's module, loaded (and its WebAssembly compiled) once per page; a failed load is tried again next time. */
function loadSodium(): Promise<SodiumModule> {
  loading ??= import('libsodium-wrappers').then(
    async ({ default: sodium }) => {
      await sodium.ready;
      const module = (sodium as unknown as { libsodium?: Partial<SodiumModule> }).libsodium;
      const missing = CALLED.filter((name) => typeof module?.[name] !== 'function');
      if (module === undefined || missing.length > 0) {
        loading = undefined;
        throw loadFailed(`its module lacks ${missing.join(', ') || 'everything'}`);
      }
      return module as SodiumModule;
    },
    (e: unknown) => {
      loading = undefined;
      throw loadFailed(e instanceof Error ? e.message : String(e), e);
    },
  );
  return loading;
}

/** Seals rows and blinds index values with one store's keys. */
export class RowCipher {
  readonly #m: SodiumModule;
  /** The cipher's fixed area in the module: the seal key, the nonce, the keyed and a working HMAC state, a MAC. */
  #fixed: number;
  readonly #key: number;
  readonly #nonce: number;
  readonly #keyed: number;
  readonly #state: number;
  readonly #mac: number;
  readonly #stateBytes: number;
  /** The scratch area for a call's input and output, and its size. */
  #scratch = 0;
  #scratchBytes = 0;
  /** This cipher's nonce prefix, and how many seals it made. */
  readonly #prefix = crypto.getRandomValues(new Uint8Array(PREFIX_BYTES));
  #count = 0;
  /** Blind values already made, by domain and value. */
  readonly #blinds = new Map<string, Map<string, string>>();
  readonly #encoder = new TextEncoder();

  /**
   * A cipher of `keys`: 64 bytes, the seal key then the blind key (copied; the caller wipes its own).
   * @example
   * const cipher = await RowCipher.create(keys);
   * cipher.open(cipher.seal(bytes, aad), aad); // bytes
   */
  static async create(keys: Uint8Array): Promise<RowCipher> {
    if (keys.length !== 2 * ROW_KEY_BYTES) throw new StoreError(`a row cipher needs ${2 * ROW_KEY_BYTES} key bytes`);
    return new RowCipher(await loadSodium(), keys);
  }

  private constructor(m: SodiumModule, keys: Uint8Array) {
    this.#m = m;
    this.#stateBytes = m._crypto_kdf_hkdf_sha256_statebytes();
    this.#fixed = m._malloc(ROW_KEY_BYTES + NONCE_BYTES + 2 * this.#stateBytes + MAC_BYTES);
    if (this.#fixed === 0) throw new StoreError('the at-rest cipher could not allocate its memory');
    this.#key = this.#fixed;
    this.#nonce = this.#key + ROW_KEY_BYTES;
    this.#keyed = this.#nonce + NONCE_BYTES;
    this.#state = this.#keyed + this.#stateBytes;
    this.#mac = this.#state + this.#stateBytes;
    const heap = m.HEAPU8;
    heap.set(keys.subarray(0, ROW_KEY_BYTES), this.#key);
    heap.set(this.#prefix, this.#nonce);
    // The blind key stays in the module only as long as the keyed state takes to absorb it (from the working state's place).
    heap.set(keys.subarray(ROW_KEY_BYTES, 2 * ROW_KEY_BYTES), this.#state);
    m._crypto_kdf_hkdf_sha256_extract_init(this.#keyed, this.#state, ROW_KEY_BYTES);
    m.HEAPU8.fill(0, this.#state, this.#state + ROW_KEY_BYTES);
  }

  /** A scratch area of at least `bytes` in the module (its memory may grow: read HEAPU8 after this). */
  #reserve(bytes: number): number {
    if (this.#fixed === 0) throw new StoreError('the at-rest cipher is used after its store closed');
    if (bytes <= this.#scratchBytes) return this.#scratch;
    if (this.#scratch !== 0) this.#m._free(this.#scratch);
    const size = Math.max(bytes, SCRATCH_START, Math.min(2 * this.#scratchBytes, SCRATCH_KEPT));
    this.#scratch = this.#m._malloc(size);
    if (this.#scratch === 0) {
      this.#scratchBytes = 0;
      throw new StoreError('the at-rest cipher could not allocate memory for a row');
    }
    this.#scratchBytes = size;
    return this.#scratch;
  }

  /** Zeroes what a call left in the scratch area, and gives a large one back. */
  #release(used: number): void {
    this.#m.HEAPU8.fill(0, this.#scratch, this.#scratch + used);
    if (this.#scratchBytes <= SCRATCH_KEPT) return;
    this.#m._free(this.#scratch);
    this.#scratch = 0;
    this.#scratchBytes = 0;
  }

  /** `plain` encrypted and authenticated together with `aad`: nonce, ciphertext and tag. */
  seal(plain: Uint8Array, aad: Aad): Uint8Array {
    return this.sealWritten(
      plain.length,
      (into) => {
        into.set(plain);
        return plain.length;
      },
      aad,
    );
  }

  /**
   * What `write` writes (at most `maxBytes`, into the cipher's own memory, returning how many) sealed as {@link seal}
   * seals it: a row is encoded where it is encrypted, with no copy of its plain bytes on the way.
   */
  sealWritten(maxBytes: number, write: (into: Uint8Array) => number, aad: Aad): Uint8Array {
    // The scratch area holds the additional data, the plain bytes, then the nonce and the sealed
    // bytes side by side: the row's stored bytes are one copy out of the module.
    const maxAad = aadBytes(aad);
    const reserved = maxAad + 2 * maxBytes + NONCE_BYTES + TAG_BYTES;
    const ad = this.#reserve(reserved);
    let heap = this.#m.HEAPU8;
    const adLength = this.#putAad(aad, heap, ad, maxAad);
    const input = ad + adLength;
    const plainBytes = this.#writePlain(write, heap.subarray(input, input + maxBytes), reserved);
    heap = this.#m.HEAPU8;
    const nonce = input + plainBytes;
    this.#putNonce(heap, nonce);
    const output = nonce + NONCE_BYTES;
    this.#m._crypto_aead_xchacha20poly1305_ietf_encrypt(
      output,
      0,
      input,
      plainBytes,
      0,
      ad,
      adLength,
      0,
      0,
      nonce,
      this.#key,
    );
    const out = heap.slice(nonce, output + plainBytes + TAG_BYTES);
    this.#release(output + plainBytes + TAG_BYTES - ad);
    return out;
  }

  /** What `write` wrote into `into` (its length); a throw or an overrun leaves nothing in the `reserved` scratch area. */
  #writePlain(write: (into: Uint8Array) => number, into: Uint8Array, reserved: number): number {
    let plainBytes: number;
    try {
      plainBytes = write(into);
    } catch (e) {
      this.#release(reserved); // nothing half-written stays in the module's memory
      throw e;
    }
    if (!(plainBytes >= 0 && plainBytes <= into.length)) {
      this.#release(reserved);
      throw new StoreError('a row was written past the room it asked for');
    }
    return plainBytes;
  }

  /** The next seal's nonce at `at`: the cipher's prefix, then the count of its seals (little-endian, 2^53 before it would repeat). */
  #putNonce(heap: Uint8Array, at: number): void {
    heap.copyWithin(at, this.#nonce, this.#nonce + PREFIX_BYTES);
    const n = this.#count++;
    const low = n >>> 0;
    const high = Math.floor(n / 2 ** 32);
    for (let i = 0; i < 4; i++) {
      heap[at + PREFIX_BYTES + i] = (low >>> (8 * i)) & 255;
      heap[at + PREFIX_BYTES + 4 + i] = (high >>> (8 * i)) & 255;
    }
  }

  /** The plain bytes of `sealed`, or undefined when it was not sealed with this key and this `aad` (or was changed). */
  open(sealed: Uint8Array, aad: Aad): Uint8Array | undefined {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) return undefined;
    const cipherBytes = sealed.length - NONCE_BYTES;
    const plainBytes = cipherBytes - TAG_BYTES;
    const maxAad = aadBytes(aad);
    const nonce = this.#reserve(NONCE_BYTES + maxAad + cipherBytes + plainBytes);
    const heap = this.#m.HEAPU8;
    const ad = nonce + NONCE_BYTES;
    const adLength = this.#putAad(aad, heap, ad, maxAad);
    const input = ad + adLength;
    const output = input + cipherBytes;
    heap.set(sealed.subarray(0, NONCE_BYTES), nonce);
    heap.set(sealed.subarray(NONCE_BYTES), input);
    const failed = this.#m._crypto_aead_xchacha20poly1305_ietf_decrypt(
      output,
      0,
      0,
      input,
      cipherBytes,
      0,
      ad,
      adLength,
      0,
      nonce,
      this.#key,
    );
    const out = failed === 0 ? heap.slice(output, output + plainBytes) : undefined;
    this.#release(NONCE_BYTES + adLength + cipherBytes + plainBytes);
    return out;
  }

  /** Writes `aad` at `at` (room for `room` bytes) and returns its length in bytes. */
  #putAad(aad: Aad, heap: Uint8Array, at: number, room: number): number {
    if (typeof aad !== 'string') {
      heap.set(aad, at);
      return aad.length;
    }
    return this.#encoder.encodeInto(aad, heap.subarray(at, at + room)).written;
  }

  /**
   * The blind value of `value` in the index named `domain` (a table and field):
   * equal inputs give equal outputs, and the domain keeps the same word in two
   * indexes from linking them.
   */
  blind(domain: string, value: string): string {
    let blinds = this.#blinds.get(domain);
    if (blinds === undefined) this.#blinds.set(domain, (blinds = new Map<string, string>()));
    const known = blinds.get(value);
    if (known !== undefined) return known;
    const input = `${domain}\u0000${value}`;
    const m = this.#m;
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const at = this.#reserve(3 * input.length);
    const heap = m.HEAPU8;
    const { written } = this.#encoder.encodeInto(input, heap.subarray(at, at + 3 * input.length));
    heap.copyWithin(this.#state, this.#keyed, this.#keyed + this.#stateBytes);
    m._crypto_kdf_hkdf_sha256_extract_update(this.#state, at, written);
    m._crypto_kdf_hkdf_sha256_extract_final(this.#state, this.#mac);
    const out = toBase64(heap.subarray(this.#mac, this.#mac + BLIND_BYTES));
    heap.fill(0, this.#state, this.#state + this.#stateBytes);
    heap.fill(0, this.#mac, this.#mac + MAC_BYTES);
    this.#release(written);
    if (blinds.size >= BLIND_CACHE) blinds.clear();
    blinds.set(value, out);
    return out;
  }

  /** Forgets the keys (close()): zeroed and freed in the module; the cipher refuses every call after. */
  wipe(): void {
    this.#blinds.clear();
    if (this.#fixed === 0) return;
    const m = this.#m;
    m.HEAPU8.fill(0, this.#fixed, this.#mac + MAC_BYTES);
    m._free(this.#fixed);
    this.#fixed = 0;
    if (this.#scratch !== 0) {
      m.HEAPU8.fill(0, this.#scratch, this.#scratch + this.#scratchBytes);
      m._free(this.#scratch);
    }
    this.#scratch = 0;
    this.#scratchBytes = 0;
  }
}
