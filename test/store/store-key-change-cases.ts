/**
 * Changing the key or passphrase of a store encrypted at rest (`Engram.changeStoreKey`, issue 26),
 * shared by the Node (fake-indexeddb) and Chromium tests: the data key is wrapped again, no row
 * is re-encrypted, only the new key opens the store, and a wrong current key writes nothing.
 */
import { Dexie } from 'dexie';
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, KeyError, NotFoundError, ValidationError, type AtRestEncryption } from '../../lib/index.js';
import { AT_REST_KEY } from '../../lib/store/at-rest-key.js';
import { EngramDb } from '../../lib/store/schema.js';

const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 32 });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
/** Few KDF rounds: the tests derive many keys (a real store has 600k). */
const OLD = { passphrase: 'correct horse battery', kdfIterations: 1000 };
const NEW = { passphrase: 'staple lantern orchard', kdfIterations: 2000 };

/** Every stored row of every table as JSON (bytes as arrays), read without a key, but the key header's. */
async function rawRows(name: string): Promise<{ rows: string; header: Record<string, unknown> }> {
  const db = new EngramDb(name);
  await db.open();
  try {
    const out: Record<string, unknown[]> = {};
    let header: Record<string, unknown> = {};
    for (const table of db.tables) {
      const rows = (await table.toArray()) as Record<string, unknown>[];
      out[table.name] = rows.filter((r) => {
        if (table.name !== 'meta' || r['key'] !== AT_REST_KEY) return true;
        header = r['value'] as Record<string, unknown>;
        return false;
      });
    }
    const rows = JSON.stringify(out, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v));
    return { rows, header };
  } finally {
    db.close();
  }
}

const opening = (name: string, encryption: AtRestEncryption) => Engram.open({ name, embedder: embedder(), encryption });

async function store(encryption: AtRestEncryption = OLD): Promise<string> {
  const name = unique('rekey');
  const e = await opening(name, encryption);
  await e.add('Ana plays the theremin', { userId: 'ana', metadata: { mood: 'calm' } });
  await e.conversation('t1', { userId: 'ana' }).add({ role: 'user', content: 'my narwhal is ill' });
  await e.close();
  return name;
}

export function storeKeyChangeTests(where: string): void {
  describe(`Engram.changeStoreKey (${where})`, () => {
    it('changes the passphrase: the old one fails, the new one opens the same rows, none re-encrypted', async () => {
      const name = await store();
      const before = await rawRows(name);
      await Engram.changeStoreKey(name, { encryption: OLD, newEncryption: NEW });
      const after = await rawRows(name);
      // One row changed: the key header (a new salt and wrap, the new cost; the same store id).
      expect(after.rows).toBe(before.rows);
      expect(after.header['storeId']).toBe(before.header['storeId']);
      expect(after.header['wrapped']).not.toBe(before.header['wrapped']);
      expect((after.header['kdf'] as { iterations: number }).iterations).toBe(2000);
      expect((after.header['kdf'] as { salt: string }).salt).not.toBe((before.header['kdf'] as { salt: string }).salt);
      await expect(opening(name, OLD)).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
      const e = await opening(name, NEW);
      expect((await e.search('theremin', { userId: 'ana' })).results[0]?.memory).toBe('Ana plays the theremin');
      expect((await e.recall.textSearch('narwhal')).total).toBe(1);
      expect((await e.stats()).damaged).toBe(0);
      await e.close();
    });

    it('a wrong current passphrase is a KeyError and writes nothing; so is the key of a store made with a passphrase', async () => {
      const name = await store();
      const before = await rawRows(name);
      await expect(
        Engram.changeStoreKey(name, { encryption: { passphrase: 'incorrect horse' }, newEncryption: NEW }),
      ).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
      const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      await expect(Engram.changeStoreKey(name, { encryption: { key }, newEncryption: NEW })).rejects.toThrow(KeyError);
      expect(await rawRows(name)).toEqual(before);
      const e = await opening(name, OLD);
      await e.close();
    });

    it('moves a store from a passphrase to a CryptoKey and back', async () => {
      const name = await store();
      const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      await Engram.changeStoreKey(name, { encryption: OLD, newEncryption: { key } });
      expect((await rawRows(name)).header['kdf']).toBeUndefined();
      await expect(opening(name, OLD)).rejects.toThrow(KeyError);
      const e = await opening(name, { key });
      expect((await e.getAll({ userId: 'ana' })).results.map((m) => m.memory)).toEqual(['Ana plays the theremin']);
      await e.close();
      const other = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      await expect(Engram.changeStoreKey(name, { encryption: { key: other }, newEncryption: NEW })).rejects.toThrow(
        KeyError,
      );
      await Engram.changeStoreKey(name, { encryption: { key }, newEncryption: NEW });
      await expect(opening(name, { key })).rejects.toThrow(KeyError);
      await (await opening(name, NEW)).close();
    });

    it('an instance holding the store open keeps reading and writing across the change', async () => {
      const name = await store();
      const open = await opening(name, OLD);
      await Engram.changeStoreKey(name, { encryption: OLD, newEncryption: NEW });
      await open.add('Bo keeps a heron', { userId: 'bo' });
      expect((await open.search('heron', { userId: 'bo' })).results[0]?.memory).toBe('Bo keeps a heron');
      await open.close();
      const again = await opening(name, NEW);
      expect((await again.search('heron', { userId: 'bo' })).results[0]?.memory).toBe('Bo keeps a heron');
      expect((await again.stats()).damaged).toBe(0);
      await again.close();
    });

    it('refuses a plain store, a missing store and options without both keys', async () => {
      const plain = unique('plain');
      await (await Engram.open({ name: plain, embedder: embedder() })).close();
      await expect(Engram.changeStoreKey(plain, { encryption: OLD, newEncryption: NEW })).rejects.toMatchObject({
        name: 'KeyError',
        reason: 'not-encrypted',
      });
      const missing = unique('missing');
      await expect(Engram.changeStoreKey(missing, { encryption: OLD, newEncryption: NEW })).rejects.toThrow(
        NotFoundError,
      );
      expect(await Dexie.exists(missing)).toBe(false);
      await expect(Engram.changeStoreKey(plain, { encryption: OLD } as never)).rejects.toThrow('options.newEncryption');
      await expect(
        Engram.changeStoreKey(plain, { encryption: OLD, newEncryption: { passphrase: 'short' } }),
      ).rejects.toThrow(ValidationError);
    });
  });
}
