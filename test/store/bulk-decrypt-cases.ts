/**
 * AES-GCM opening of large sealed bytes (lib/store/bulk-decrypt.ts), shared by the Node tests
 * (no worker: opened on the calling thread) and the Chromium ones (a worker's thread for large
 * bytes, handed over to it; small ones open on the calling thread): the same plain bytes either
 * way, undefined for bytes changed, moved under other additional data, or sealed with another key.
 */
import { describe, expect, it } from 'vitest';
import { decryptBulk } from '../../lib/store/bulk-decrypt.js';

const IV_BYTES = 12;

async function key(): Promise<CryptoKey> {
  return crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
}

/** `plain` sealed as RowSealing.sealBulk seals: the IV, then the ciphertext and tag, in a buffer of their own. */
async function seal(
  k: CryptoKey,
  plain: Uint8Array<ArrayBuffer>,
  aad: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer>> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, plain));
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return out;
}

const text = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s);

/** 4 MB of varied bytes (a snapshot piece's size). */
function piece(): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(4 * 2 ** 20);
  for (let i = 0; i < out.length; i++) out[i] = Math.imul(i, 0x9e3779b1) >>> 24;
  return out;
}

/** Whether `a` holds exactly the bytes of `b` (a deep equality of 4 MB is too slow to report). */
function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}

export function bulkDecryptTests(where: string, handedOver: boolean): void {
  describe(`bulk decryption (${where})`, () => {
    it('opens what AES-GCM sealed, many pieces at once, each to its own bytes', async () => {
      const k = await key();
      const plains = [piece(), text('a small piece'), new Uint8Array(0), piece().map((b) => b ^ 0x5a)];
      const sealed = await Promise.all(plains.map((p, i) => seal(k, p, text(`piece ${i}`))));
      const opened = await Promise.all(
        sealed.map((s, i) => decryptBulk({ key: k, ivBytes: IV_BYTES, aad: text(`piece ${i}`), sealed: s })),
      );
      expect(opened.map((o, i) => sameBytes(o, plains[i]!))).toEqual([true, true, true, true]);
      // Where a worker opened them (the 4 MB pieces), the sealed bytes were handed over (not
      // copied); the small ones open on the calling thread (no round trip), left as they were.
      expect(sealed.map((s) => s.byteLength === 0)).toEqual([handedOver, false, false, handedOver]);
    });

    it('a view into a larger buffer is copied, never handed over, and opens the same', async () => {
      const k = await key();
      const sealed = await seal(k, text('inside a larger buffer'), text('aad'));
      const larger = new Uint8Array(sealed.length + 10);
      larger.set(sealed, 5);
      const view = larger.subarray(5, 5 + sealed.length);
      expect(await decryptBulk({ key: k, ivBytes: IV_BYTES, aad: text('aad'), sealed: view })).toEqual(
        text('inside a larger buffer'),
      );
      expect(larger.byteLength).toBe(sealed.length + 10);
    });

    it('refuses bytes changed, under other additional data, or under another key: undefined, and goes on', async () => {
      const k = await key();
      const plain = text('the lighthouse keeper');
      const flipped = await seal(k, plain, text('a'));
      flipped[IV_BYTES + 3]! ^= 1;
      expect(await decryptBulk({ key: k, ivBytes: IV_BYTES, aad: text('a'), sealed: flipped })).toBeUndefined();
      // A large piece changed (a worker's refusal where there is one).
      const large = await seal(k, piece(), text('a'));
      large[large.length - 1]! ^= 1;
      expect(await decryptBulk({ key: k, ivBytes: IV_BYTES, aad: text('a'), sealed: large })).toBeUndefined();
      expect(
        await decryptBulk({ key: k, ivBytes: IV_BYTES, aad: text('b'), sealed: await seal(k, plain, text('a')) }),
      ).toBeUndefined();
      expect(
        await decryptBulk({
          key: await key(),
          ivBytes: IV_BYTES,
          aad: text('a'),
          sealed: await seal(k, plain, text('a')),
        }),
      ).toBeUndefined();
      expect(
        await decryptBulk({ key: k, ivBytes: IV_BYTES, aad: text('a'), sealed: new Uint8Array(5) }),
      ).toBeUndefined();
      // The next request is answered as before.
      expect(
        await decryptBulk({ key: k, ivBytes: IV_BYTES, aad: text('a'), sealed: await seal(k, plain, text('a')) }),
      ).toEqual(plain);
    });
  });
}
