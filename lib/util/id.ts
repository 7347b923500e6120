/**
 * Time-sortable, globally unique ids (ULID layout: 48-bit millisecond time,
 * 80 random bits, Crockford base32). Ids made in one process are strictly
 * increasing even within one millisecond, so sorting by id sorts by creation.
 */

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = -1;
const lastRandom = new Uint8Array(10);

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits -> 16 base32 characters, five bits at a time.
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31]!;
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

function increment(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i]! < 255) {
      bytes[i]! += 1;
      return;
    }
    bytes[i] = 0;
  }
}

/**
 * A new id. `now` lets tests pin the time part.
 * @example
 * newId() // '01J9Z3K8Q4W7X2M5N6P8R0S1T2'
 */
export function newId(now: number = Date.now()): string {
  if (now <= lastTime) {
    increment(lastRandom);
  } else {
    lastTime = now;
    crypto.getRandomValues(lastRandom);
    lastRandom[0]! &= 0x7f; // leave room for increments within one millisecond
  }
  return encodeTime(lastTime) + encodeRandom(lastRandom);
}

/** True for a string shaped like an id made by {@link newId}. */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value);
}

/**
 * The UUID that stands for an id where a remote side wants UUIDs (Qdrant point ids).
 * Deterministic and reversible with {@link idFromUuid}.
 */
export function idToUuid(id: string): string {
  let value = 0n;
  for (const ch of id) value = value * 32n + BigInt(ALPHABET.indexOf(ch));
  const hex = value.toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Inverse of {@link idToUuid}. */
export function idFromUuid(uuid: string): string {
  let value = BigInt(`0x${uuid.replaceAll('-', '')}`);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = ALPHABET[Number(value % 32n)]! + out;
    value /= 32n;
  }
  return out;
}
