/**
 * Encrypted exports (issue 26: "Export stays plain unless asked"), shared by the Node
 * (fake-indexeddb) and Chromium (real IndexedDB, the browser's WebCrypto) tests: the round
 * trip into a plain and an encrypted store, what the file's bytes reveal, the passphrase
 * checks, and every kind of damage refused before anything is written.
 */
import { Dexie } from 'dexie';
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, ImportError, KeyError, ValidationError, isEncryptedExport } from '../../lib/index.js';
import {
  MIN_CHUNK_BYTES,
  SEALED_EXPORT_FORMAT,
  openSealedExport,
  sealExport,
} from '../../lib/engine/transfer/sealed-export.js';
import { manualClock } from '../helpers.js';

const DIMENSIONS = 32;
const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: DIMENSIONS });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
/** Few KDF rounds: the tests derive many keys (a real export has 600k). */
const SECRET = { passphrase: 'correct horse battery', kdfIterations: 1000 };
const STORE_PASS = { passphrase: 'another store passphrase', kdfIterations: 1000 };

/** Words that must not appear in an encrypted export: texts, metadata keys and values, scope ids, a block label. */
const SECRET_WORDS = [
  'quokka',
  'zeppelin',
  'theremin',
  'narwhal',
  'armadillo',
  'gondola',
  'mdsecret',
  'mdkeyname',
  'anauser',
  'helperagent',
  'sessionx',
  'projecty',
  'persona-label',
];
const SECRET_TEXTS = ['Anauser hides a zeppelin', 'Anauser plays the theremin'];

/** A store with every kind of record, in several scopes. */
async function feed(e: Engram): Promise<string[]> {
  const kept = (await e.add('Anauser plays the theremin', { userId: 'anauser', metadata: { mdkeyname: 'mdsecret' } }))
    .results[0]!.id;
  const updated = (await e.add('Anauser hides a quokka', { userId: 'anauser', agentId: 'helperagent' })).results[0]!.id;
  await e.update(updated, 'Anauser hides a zeppelin');
  const gone = (await e.add('a gondola note to delete', { userId: 'anauser' })).results[0]!.id;
  await e.delete(gone);
  const chat = e.conversation('t1', { userId: 'anauser', agentId: 'helperagent' });
  await chat.add([
    { role: 'user', content: 'my narwhal is ill', metadata: { mood: 'mdsecret' } },
    { role: 'assistant', content: 'sorry about the narwhal' },
  ]);
  await e.blocks('helperagent', { userId: 'anauser' }).set('persona-label', 'Anauser, armadillo fan');
  const mem = e.system({ sessionId: 'sessionx', projectId: 'projecty' });
  await mem.remember('gondola-plan', 'the gondola leaves at nine', { tier: 'project' });
  await mem.addTrace('plan', 'thinking about the gondola', { why: ['quokka'] }, 0.5);
  await e.flush();
  return [kept, updated, gone];
}

/** What a user sees of a store: search in every mode (scoped and not), recall, history, blocks, messages. */
async function answers(e: Engram, ids: readonly string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of ['theremin', 'zeppelin hides', 'gondola nine', 'narwhal'])
    for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
      out.push((await e.search(query, { mode, limit: 5 })).results);
      out.push((await e.search(query, { mode, limit: 5, userId: 'anauser' })).results);
    }
  const recall = await e.recall.textSearch('narwhal');
  out.push(recall.total, recall.results);
  for (const id of ids) out.push(await e.history(id));
  out.push(await e.blocks('helperagent', { userId: 'anauser' }).list());
  out.push(await e.conversation('t1', { userId: 'anauser', agentId: 'helperagent' }).getMessages());
  out.push(await e.system({ sessionId: 'sessionx', projectId: 'projecty' }).recall('gondola-plan'));
  out.push((await e.getAll({ limit: 100 })).results);
  return out;
}

async function source(): Promise<{ e: Engram; ids: string[] }> {
  const clock = manualClock();
  const e = await Engram.open({ name: unique('src'), embedder: embedder(), now: clock.now });
  const ids = await feed(e);
  return { e, ids };
}

function holds(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

const bytesOf = async (file: Blob): Promise<Uint8Array<ArrayBuffer>> => new Uint8Array(await file.arrayBuffer());
const headerEnd = (bytes: Uint8Array): number => bytes.indexOf(0x0a) + 1;
const importing = (file: Blob | string, options: Partial<Parameters<typeof Engram.import>[1]> = {}) =>
  Engram.import(file, { name: unique('dst'), mode: 'replace', embedder: embedder(), ...options });

/** A sealed export of `e` in chunks of MIN_CHUNK_BYTES (several chunks, so chunk boundaries can be cut). */
async function smallChunks(e: Engram): Promise<Blob> {
  return sealExport(await e.export(), SECRET, {}, MIN_CHUNK_BYTES);
}

export function sealedExportTests(where: string): void {
  describe(`encrypted export (${where})`, () => {
    it('export({ encrypt }) round-trips into a plain and an encrypted store: every answer equals the original', async () => {
      const { e, ids } = await source();
      const expected = await answers(e, ids);
      const progress: string[] = [];
      const file = await e.export({ encrypt: SECRET, onProgress: (p) => progress.push(p.phase) });
      expect(progress).toContain('export');
      expect(progress.at(-1)).toBe('encrypt');
      await e.close();
      const decrypting: string[] = [];
      const plain = await importing(file, { decrypt: SECRET.passphrase, onProgress: (p) => decrypting.push(p.phase) });
      expect(decrypting[0]).toBe('decrypt');
      expect(await answers(plain, ids)).toEqual(expected);
      await plain.close();
      const sealedName = unique('dst-sealed');
      const sealed = await importing(file, {
        name: sealedName,
        decrypt: { passphrase: SECRET.passphrase },
        encryption: STORE_PASS,
      });
      expect(await answers(sealed, ids)).toEqual(expected);
      await sealed.close();
      // The encrypted store keeps its own passphrase, not the file's.
      await expect(
        Engram.open({ name: sealedName, embedder: embedder(), encryption: { passphrase: SECRET.passphrase } }),
      ).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
    });

    it('an encrypted export in many chunks opens to exactly the plain export', async () => {
      const { e } = await source();
      const plain = await e.export();
      const sealed = await smallChunks(e);
      await e.close();
      expect(plain.size).toBeGreaterThan(4 * MIN_CHUNK_BYTES);
      expect(await openSealedExport(sealed, SECRET.passphrase)).toBe(await plain.text());
      // The body is the plain file plus one 16-byte tag per chunk.
      const chunks = Math.ceil(plain.size / MIN_CHUNK_BYTES);
      expect(sealed.size - headerEnd(await bytesOf(sealed))).toBe(plain.size + 16 * chunks);
    });

    it('the bytes of an encrypted export hold no text, metadata, scope id, word or vector; its header says only how it is sealed', async () => {
      const { e } = await source();
      const plainText = (await (await e.export()).text()).toLowerCase();
      for (const word of SECRET_WORDS) expect(plainText.includes(word), word).toBe(true);
      const file = await e.export({ encrypt: SECRET });
      await e.close();
      const bytes = await bytesOf(file);
      const asText = `${new TextDecoder().decode(bytes)} ${Array.from(bytes, (b) => String.fromCharCode(b)).join('')}`;
      for (const word of SECRET_WORDS) expect(asText.toLowerCase().includes(word), word).toBe(false);
      for (const v of await embedder().embed(SECRET_TEXTS)) {
        const raw = new Uint8Array(v.buffer, v.byteOffset, 16);
        expect(holds(bytes, raw)).toBe(false);
        // The plain export keeps vectors as base64: not that either.
        let b64 = '';
        for (const b of new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) b64 += String.fromCharCode(b);
        expect(asText.includes(btoa(b64).slice(0, 20))).toBe(false);
      }
      const header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, headerEnd(bytes) - 1))) as Record<
        string,
        unknown
      >;
      expect(Object.keys(header).sort()).toEqual(['check', 'cipher', 'format', 'kdf', 'version']);
      expect(header).toMatchObject({
        format: SEALED_EXPORT_FORMAT,
        version: 1,
        kdf: { name: 'PBKDF2-SHA256', iterations: 1000 },
        cipher: { name: 'AES-256-GCM', chunkBytes: 1 << 20, nonce: 'prefix7-counter32be-final8' },
      });
      expect(Object.keys(header['kdf'] as object).sort()).toEqual(['iterations', 'name', 'salt']);
      expect(Object.keys(header['cipher'] as object).sort()).toEqual(['chunkBytes', 'name', 'nonce', 'noncePrefix']);
      // Two exports of the same store share no salt, nonce prefix or body bytes.
      const again = await bytesOf(await sealExport(new Blob([plainText]), SECRET));
      expect(new TextDecoder().decode(again.subarray(0, 200))).not.toBe(
        new TextDecoder().decode(bytes.subarray(0, 200)),
      );
    });

    it('import() refuses a wrong passphrase, a missing one, and one given for a plain file with KeyError, creating nothing', async () => {
      const { e } = await source();
      const sealed = await e.export({ encrypt: SECRET });
      const plain = await e.export();
      await e.close();
      const name = unique('never');
      await expect(importing(sealed, { name, decrypt: 'incorrect horse battery' })).rejects.toMatchObject({
        name: 'KeyError',
        reason: 'wrong-key',
      });
      await expect(importing(sealed, { name })).rejects.toMatchObject({ name: 'KeyError', reason: 'key-needed' });
      await expect(importing(sealed, { name })).rejects.toThrow('passphrase');
      await expect(importing(plain, { name, decrypt: SECRET.passphrase })).rejects.toMatchObject({
        name: 'KeyError',
        reason: 'not-encrypted',
      });
      await expect(importing(await sealed.text(), { name, decrypt: SECRET.passphrase })).rejects.toThrow(ImportError);
      expect([await isEncryptedExport(sealed), await isEncryptedExport(plain)]).toEqual([true, false]);
      expect([await isEncryptedExport(await plain.text()), await isEncryptedExport(new Blob([]))]).toEqual([
        false,
        false,
      ]);
      expect(await Dexie.exists(name)).toBe(false);
    });

    it('a wrong passphrase or a damaged file leaves an existing store exactly as it was (merge and replace)', async () => {
      const { e } = await source();
      const sealed = await bytesOf(await e.export({ encrypt: SECRET }));
      await e.close();
      const clock = manualClock();
      const name = unique('existing');
      const target = await Engram.open({ name, embedder: embedder(), now: clock.now });
      const id = (await target.add('Bo keeps a heron', { userId: 'bo' })).results[0]!.id;
      const before = await answers(target, [id]);
      await target.close();
      const damaged = sealed.slice();
      damaged[damaged.length - 40]! ^= 1;
      for (const mode of ['merge', 'replace'] as const) {
        await expect(importing(new Blob([sealed]), { name, mode, decrypt: 'incorrect horse' })).rejects.toThrow(
          KeyError,
        );
        await expect(importing(new Blob([damaged]), { name, mode, decrypt: SECRET.passphrase })).rejects.toThrow(
          ImportError,
        );
      }
      const again = await Engram.open({ name, embedder: embedder(), now: clock.now });
      expect(await answers(again, [id])).toEqual(before);
      await again.close();
    });

    it('a flipped bit, a cut (inside a chunk and at a chunk boundary), chunks dropped, swapped or appended: ImportError, nothing written', async () => {
      const { e } = await source();
      const bytes = await bytesOf(await smallChunks(e));
      await e.close();
      const start = headerEnd(bytes);
      const sealedChunk = MIN_CHUNK_BYTES + 16;
      const chunk = (i: number): Uint8Array<ArrayBuffer> =>
        bytes.slice(start + i * sealedChunk, start + (i + 1) * sealedChunk);
      const flipped = bytes.slice();
      flipped[start + sealedChunk + 5]! ^= 0x80;
      const swapped = new Uint8Array([
        ...bytes.subarray(0, start),
        ...chunk(1),
        ...chunk(0),
        ...bytes.subarray(start + 2 * sealedChunk),
      ]);
      const dropped = new Uint8Array([
        ...bytes.subarray(0, start),
        ...chunk(0),
        ...bytes.subarray(start + 2 * sealedChunk),
      ]);
      const cases: Record<string, Uint8Array<ArrayBuffer>> = {
        flipped,
        'cut inside a chunk': bytes.subarray(0, bytes.length - 100),
        'cut at a chunk boundary': bytes.subarray(0, start + 2 * sealedChunk),
        'cut after the header': bytes.subarray(0, start),
        'cut inside a tag': bytes.subarray(0, start + 2 * sealedChunk + 7),
        swapped,
        dropped,
        'a chunk appended': new Uint8Array([...bytes, ...chunk(0)]),
        'bytes appended': new Uint8Array([...bytes, 1, 2, 3]),
      };
      for (const [what, file] of Object.entries(cases)) {
        const name = unique('damaged');
        const attempt = importing(new Blob([file]), { name, decrypt: SECRET.passphrase });
        await expect(attempt, what).rejects.toThrow(ImportError);
        await expect(attempt, what).rejects.toMatchObject({ line: 2 });
        expect(await Dexie.exists(name), what).toBe(false);
      }
    });

    it('a header from another file, or with a setting changed, is refused before anything is written', async () => {
      const { e } = await source();
      const a = await bytesOf(await e.export({ encrypt: SECRET }));
      const b = await bytesOf(await e.export({ encrypt: SECRET }));
      await e.close();
      // b's header (same passphrase, another salt and nonce prefix) on a's body: the key check passes, no chunk opens.
      const swapped = new Uint8Array([...b.subarray(0, headerEnd(b)), ...a.subarray(headerEnd(a))]);
      await expect(importing(new Blob([swapped]), { decrypt: SECRET.passphrase })).rejects.toMatchObject({
        name: 'ImportError',
        line: 2,
      });
      const header = JSON.parse(new TextDecoder().decode(a.subarray(0, headerEnd(a) - 1))) as {
        kdf: { iterations: number };
        cipher: { chunkBytes: number; noncePrefix: string };
      };
      const withHeader = (h: unknown): Blob => new Blob([`${JSON.stringify(h)}\n`, a.subarray(headerEnd(a))]);
      // The same settings written in another order: the key check passes, but the body was sealed to the exact header bytes.
      const { kdf, cipher, ...rest } = header as unknown as Record<string, Record<string, unknown>>;
      const reordered = { ...rest, kdf: Object.fromEntries(Object.entries(kdf!).reverse()), cipher };
      await expect(importing(withHeader(reordered), { decrypt: SECRET.passphrase })).rejects.toMatchObject({
        name: 'ImportError',
        line: 2,
      });
      // Another cost or chunk size: the key check no longer matches (these settings are in it).
      await expect(
        importing(withHeader({ ...header, kdf: { ...header.kdf, iterations: 1001 } }), { decrypt: SECRET.passphrase }),
      ).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
      await expect(
        importing(withHeader({ ...header, cipher: { ...header.cipher, chunkBytes: 4096 } }), {
          decrypt: SECRET.passphrase,
        }),
      ).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
      // Settings outside the limits are refused before any key is derived (2^40 rounds would never end).
      const refused: Record<string, unknown> = {
        'a KDF cost of 2^40': { ...header, kdf: { ...header.kdf, iterations: 2 ** 40 } },
        'a KDF cost of 10': { ...header, kdf: { ...header.kdf, iterations: 10 } },
        'a 1 GiB chunk': { ...header, cipher: { ...header.cipher, chunkBytes: 2 ** 30 } },
        'another KDF': { ...header, kdf: { ...header.kdf, name: 'scrypt' } },
        'another cipher': { ...header, cipher: { ...header.cipher, name: 'AES-128-CBC' } },
        'a short salt': { ...header, kdf: { ...header.kdf, salt: 'AAAA' } },
        'a newer version': { ...header, version: 2 },
        'an extra field': { ...header, counts: { memory: 3 } },
      };
      for (const [what, h] of Object.entries(refused)) {
        const attempt = importing(withHeader(h), { decrypt: SECRET.passphrase });
        await expect(attempt, what).rejects.toThrow(ImportError);
        await expect(attempt, what).rejects.toMatchObject({ line: 1 });
      }
    });

    it('export() and import() check the passphrase options at the door', async () => {
      const { e } = await source();
      await expect(e.export({ encrypt: 'short' })).rejects.toThrow(ValidationError);
      await expect(e.export({ encrypt: { passphrase: 'long enough', kdfIterations: 2 ** 40 } })).rejects.toThrow(
        'options.encrypt.kdfIterations',
      );
      await expect(e.export({ encrypt: { passphrase: 'long enough', salt: 'x' } as never })).rejects.toThrow(
        ValidationError,
      );
      await expect(e.export({ encrypted: true } as never)).rejects.toThrow(ValidationError);
      const file = await e.export({ encrypt: SECRET });
      await e.close();
      await expect(importing(file, { decrypt: 'short' })).rejects.toThrow('options.decrypt');
      await expect(
        importing(file, { decrypt: { passphrase: SECRET.passphrase, kdfIterations: 1000 } as never }),
      ).rejects.toThrow(ValidationError);
    });

    it('export({ encrypt }) and import({ decrypt }) stop on abort, writing nothing', async () => {
      const { e } = await source();
      const file = await smallChunks(e);
      await expect(e.export({ encrypt: SECRET, signal: AbortSignal.abort() })).rejects.toMatchObject({
        code: 'ABORTED',
      });
      await e.close();
      const controller = new AbortController();
      const name = unique('aborted');
      const attempt = importing(file, {
        name,
        decrypt: SECRET.passphrase,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.phase === 'decrypt' && p.done > 2 * MIN_CHUNK_BYTES) controller.abort();
        },
      });
      await expect(attempt).rejects.toMatchObject({ code: 'ABORTED' });
      expect(await Dexie.exists(name)).toBe(false);
    });
  });
}
