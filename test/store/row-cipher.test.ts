import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
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
});
