import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { RowCipher } from '../../lib/store/row-cipher.js';

const keys = crypto.getRandomValues(new Uint8Array(64));
const sealKey = keys.slice(0, 32);
const aad = new TextEncoder().encode('["memories","a"]');
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('RowCipher', () => {
  it('seals as XChaCha20-Poly1305 with the stored nonce, and opens rows sealed with any random nonce', async () => {
    const cipher = await RowCipher.create(keys);
    for (const plain of [text(''), text('Ana plays the theremin'), crypto.getRandomValues(new Uint8Array(5000))]) {
      const sealed = cipher.seal(plain, aad);
      // Nonce (24), ciphertext, tag (16): the bytes XChaCha20-Poly1305 makes under the whole nonce.
      const nonce = sealed.subarray(0, 24);
      expect(xchacha20poly1305(sealKey, nonce, aad).decrypt(sealed.subarray(24))).toEqual(plain);
      expect(xchacha20poly1305(sealKey, nonce, aad).encrypt(plain)).toEqual(sealed.subarray(24));
      expect(cipher.open(sealed, aad)).toEqual(plain);
      // A row sealed by XChaCha20-Poly1305 itself under a random nonce (as rows were before) opens too.
      const random = crypto.getRandomValues(new Uint8Array(24));
      const older = new Uint8Array([...random, ...xchacha20poly1305(sealKey, random, aad).encrypt(plain)]);
      expect(cipher.open(older, aad)).toEqual(plain);
    }
  });

  it('never repeats a nonce within a cipher or across ciphers of one key, and each opens the other’s rows', async () => {
    const [one, two] = [await RowCipher.create(keys), await RowCipher.create(keys)];
    const nonces = new Set<string>();
    const rows: [RowCipher, Uint8Array][] = [];
    for (let i = 0; i < 300; i++)
      for (const cipher of [one, two]) {
        const sealed = cipher.seal(text(`row ${i}`), aad);
        nonces.add(String.fromCharCode(...sealed.subarray(0, 24)));
        rows.push([cipher, sealed]);
      }
    expect(nonces.size).toBe(600);
    for (const [writer, sealed] of rows)
      expect(new TextDecoder().decode((writer === one ? two : one).open(sealed, aad))).toMatch(/^row /);
  });

  it('a changed bit, other additional data or another key does not open', async () => {
    const cipher = await RowCipher.create(keys);
    const sealed = cipher.seal(text('Ana plays the theremin'), aad);
    for (const at of [0, 20, 30, sealed.length - 1]) {
      const changed = sealed.slice();
      changed[at]! ^= 1;
      expect(cipher.open(changed, aad), `bit at ${at}`).toBeUndefined();
    }
    expect(cipher.open(sealed, text('["memories","b"]'))).toBeUndefined();
    expect((await RowCipher.create(crypto.getRandomValues(new Uint8Array(64)))).open(sealed, aad)).toBeUndefined();
    expect(cipher.open(sealed.subarray(0, 30), aad)).toBeUndefined();
  });

  it('blinds as the first 128 bits of HMAC-SHA256 under the blind key, base64 (the values stores already hold)', async () => {
    const cipher = await RowCipher.create(keys);
    const blindKey = keys.slice(32, 64);
    const reference = (input: string): string =>
      btoa(String.fromCharCode(...hmac(sha256, blindKey, text(input)).subarray(0, 16)));
    const values = ['', 'v:ramen', 'Ana plays the theremin', 'é漢字🙂'.repeat(40), 'x'.repeat(70_000), '\u0000'];
    for (const domain of ['terms.k', 'memories.hash'])
      for (const value of values) {
        expect(cipher.blind(domain, value)).toBe(reference(`${domain}\u0000${value}`));
        expect(cipher.blind(domain, value), 'cached').toBe(reference(`${domain}\u0000${value}`));
      }
    expect(cipher.blind('terms.k', 'ramen')).not.toBe(cipher.blind('memories.hash', 'ramen'));
  });

  it('seals and opens rows larger than its scratch area, and keeps working after one', async () => {
    const cipher = await RowCipher.create(keys);
    // 1.5 MB is past the scratch area the cipher keeps (1 MiB): allocated for the call, then given back.
    const same = (a: Uint8Array | undefined, b: Uint8Array): boolean => a !== undefined && Buffer.compare(a, b) === 0;
    for (const size of [1_500_000, 10, 200_000, 0]) {
      const plain = crypto.getRandomValues(new Uint8Array(Math.min(size, 65536)));
      const big = new Uint8Array(size);
      for (let i = 0; i < size; i += plain.length) big.set(plain.subarray(0, Math.min(plain.length, size - i)), i);
      const sealed = cipher.seal(big, aad);
      expect(sealed.length).toBe(size + 40);
      expect(same(cipher.open(sealed, aad), big)).toBe(true);
      const nonce = sealed.subarray(0, 24);
      expect(same(xchacha20poly1305(sealKey, nonce, aad).decrypt(sealed.subarray(24)), big)).toBe(true);
    }
  });

  it('a write that throws or overruns its room leaves nothing in the scratch memory, and the cipher goes on', async () => {
    const cipher = await RowCipher.create(keys);
    let seen: Uint8Array | undefined;
    const failing = (into: Uint8Array): number => {
      into.set(text('Ana plays the theremin'));
      seen = into;
      throw new Error('the encoder failed');
    };
    expect(() => cipher.sealWritten(64, failing, aad)).toThrow('the encoder failed');
    expect(seen!.every((b) => b === 0)).toBe(true);
    const overrun = (into: Uint8Array): number => {
      into.set(text('Ana'));
      seen = into;
      return into.length + 1;
    };
    expect(() => cipher.sealWritten(8, overrun, aad)).toThrow(/past the room it asked for/);
    expect(seen!.every((b) => b === 0)).toBe(true);
    expect(cipher.open(cipher.seal(text('Bo'), aad), aad)).toEqual(text('Bo'));
  });

  it('refuses every call once wiped (a closed store), never sealing under a zeroed key', async () => {
    const cipher = await RowCipher.create(keys);
    const sealed = cipher.seal(text('Ana'), aad);
    cipher.wipe();
    expect(() => cipher.seal(text('Ana'), aad)).toThrow(/after its store closed/);
    expect(() => cipher.open(sealed, aad)).toThrow(/after its store closed/);
    expect(() => cipher.blind('terms.k', 'ana')).toThrow(/after its store closed/);
    cipher.wipe();
  });
});
