/**
 * The key header's format (lib/store/at-rest-key.ts HEADER_FORMAT), shared by the Node
 * (fake-indexeddb) and Chromium tests. Since session 40 an encrypted store's rows are sealed in a form
 * an engram of header format 1 would misread; such an engram reads only format 1, so a store is marked
 * format 2 when it is made or first opened here, and a format this engram does not know is refused
 * before anything is read or written.
 */
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, KeyError } from '../../lib/index.js';
import { AT_REST_KEY } from '../../lib/store/at-rest-key.js';
import { EngramDb } from '../../lib/store/schema.js';

const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 32 });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

/** The key header as stored, read without a key. */
async function storedHeader(name: string): Promise<Record<string, unknown>> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return (await db.meta.get(AT_REST_KEY))?.value as Record<string, unknown>;
  } finally {
    db.close();
  }
}

/**
 * A store as an engram of header format `format` made it with `key` before any row: its key header
 * alone, the data key wrapped as at-rest-key.ts wraps it (AES-GCM, the header's settings as additional data).
 */
async function storeWithHeader(name: string, key: CryptoKey, format: number): Promise<Record<string, unknown>> {
  const storeId = base64(crypto.getRandomValues(new Uint8Array(16)));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const aad = new TextEncoder().encode(JSON.stringify(['engram-at-rest', format, storeId, null, null]));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: aad },
      key,
      crypto.getRandomValues(new Uint8Array(64)),
    ),
  );
  const wrapped = new Uint8Array(iv.length + sealed.length);
  wrapped.set(iv);
  wrapped.set(sealed, iv.length);
  const header = { format, storeId, wrapped: base64(wrapped) };
  const db = new EngramDb(name);
  await db.open();
  try {
    await db.meta.put({ key: AT_REST_KEY, value: header });
  } finally {
    db.close();
  }
  return header;
}

/** A key as the desktop's keychain hands one over: AES-GCM, not extractable, both usages. */
async function aesKey(): Promise<{ key: CryptoKey }> {
  return { key: await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']) };
}

export function headerFormatTests(where: string): void {
  describe(`the key header's format (${where})`, () => {
    it('a new encrypted store is of format 2', async () => {
      const name = unique('header-new');
      const { key } = await aesKey();
      const e = await Engram.open({ name, embedder: embedder(), encryption: { key } });
      await e.close();
      expect((await storedHeader(name))['format']).toBe(2);
    });

    it('a store of format 1 opens with its key and moves to format 2 (same store id); it keeps working and reopens', async () => {
      const name = unique('header-old');
      const { key } = await aesKey();
      const before = await storeWithHeader(name, key, 1);
      const e = await Engram.open({ name, embedder: embedder(), encryption: { key } });
      const id = (await e.add('the lighthouse keeper sings to whales', { userId: 'ana' })).results[0]!.id;
      await e.close();
      const after = await storedHeader(name);
      expect(after['format']).toBe(2);
      expect(after['storeId']).toBe(before['storeId']);
      expect(after['wrapped']).not.toBe(before['wrapped']);
      const again = await Engram.open({ name, embedder: embedder(), encryption: { key } });
      try {
        expect((await again.get(id))?.memory).toBe('the lighthouse keeper sings to whales');
        const found = await again.search('lighthouse keeper', { userId: 'ana' });
        expect(found.results.map((r) => r.id)).toEqual([id]);
      } finally {
        await again.close();
      }
      // A wrong key is still refused after the move.
      const { key: other } = await aesKey();
      await expect(Engram.open({ name, embedder: embedder(), encryption: { key: other } })).rejects.toMatchObject({
        reason: 'wrong-key',
      });
    });

    it('a header of a format this engram does not read is refused before anything is written', async () => {
      const name = unique('header-newer');
      const { key } = await aesKey();
      const before = await storeWithHeader(name, key, 3);
      const opening = Engram.open({ name, embedder: embedder(), encryption: { key } });
      await expect(opening).rejects.toBeInstanceOf(KeyError);
      await expect(opening).rejects.toMatchObject({ reason: 'unsupported' });
      const db = new EngramDb(name);
      await db.open();
      try {
        expect(await db.meta.toArray()).toEqual([{ key: AT_REST_KEY, value: before }]);
      } finally {
        db.close();
      }
    });
  });
}
