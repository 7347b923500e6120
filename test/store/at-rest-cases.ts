/**
 * Encryption at rest (issue 26), shared by the Node (fake-indexeddb) and Chromium (real
 * IndexedDB) tests: what a raw read of every table finds, the key checks, tampering, and the
 * same answers from a plain and an encrypted store fed the same calls.
 */
import { describe, expect, it, vi } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, KeyError, StoreError, type EngramOptions } from '../../lib/index.js';
import { ALL_TABLES, EngramDb } from '../../lib/store/schema.js';
import { RowCipher } from '../../lib/store/row-cipher.js';
import { CLEAR_TABLES, SEALED_TABLES } from '../../lib/store/row-sealing.js';
import { decodeValue, encodeValue } from '../../lib/store/value-codec.js';
import { MemoryTarget } from '../../lib/sync/memory-target.js';
import { manualClock } from '../helpers.js';

const DIMENSIONS = 32;
export const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: DIMENSIONS });
export const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
/** Few KDF rounds: the tests derive many keys (a real store has 600k). */
export const PASS = { passphrase: 'correct horse battery', kdfIterations: 1000 };

/** Every stored row of every table, read without a key. */
export async function rawRows(name: string): Promise<Record<string, Record<string, unknown>[]>> {
  const db = new EngramDb(name);
  await db.open();
  try {
    const out: Record<string, Record<string, unknown>[]> = {};
    for (const table of db.tables) out[table.name] = (await table.toArray()) as Record<string, unknown>[];
    return out;
  } finally {
    db.close();
  }
}

/** What a reader of the files sees: every row as text, byte arrays decoded as UTF-8 and Latin-1, and the bytes. */
async function rawDump(name: string): Promise<{ text: string; bytes: Uint8Array[] }> {
  const bytes: Uint8Array[] = [];
  const rows = await rawRows(name);
  const text = JSON.stringify(rows, (_k, v: unknown) => {
    if (!ArrayBuffer.isView(v)) return v;
    const b = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    bytes.push(b);
    return `${new TextDecoder().decode(b)} ${String.fromCharCode(...b.subarray(0, 65536))}`;
  });
  return { text: text.toLowerCase(), bytes };
}

function holds(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** The secrets a raw read must not find: words (texts, metadata, keys, terms) and the vectors' bytes. */
export async function expectNothingReadable(name: string, words: readonly string[], vectorsOf: readonly string[]) {
  const { text, bytes } = await rawDump(name);
  for (const word of words) expect(text.includes(word.toLowerCase()), word).toBe(false);
  const [vectors] = await Promise.all([embedder().embed(vectorsOf)]);
  for (const v of vectors) {
    const needle = new Uint8Array(v.buffer, v.byteOffset, 16);
    expect(bytes.some((b) => holds(b, needle))).toBe(false);
  }
}

export const SECRET_WORDS = [
  'quokka',
  'zeppelin',
  'theremin',
  'narwhal',
  'armadillo',
  'gondola',
  'mdsecret',
  'mdkeyname',
];
export const SECRET_TEXTS = ['Ana hides a quokka', 'Ana hides a zeppelin', 'Ana plays the theremin'];

/**
 * Six memories that share words (a search finds more than one): what the tests that compare a
 * plain store with a sealed one feed both.
 */
export const CORPUS = [
  'Ana plays the theremin on Sundays',
  'Ana hides a quokka in the garden',
  'Bo keeps a heron and two quokkas',
  'The theremin is an electronic instrument played without touch',
  'Cy rides a gondola through Venice every summer',
  'A heron stood in the garden pond at dawn',
];

export async function feed(e: Engram): Promise<{ kept: string; updated: string }> {
  const kept = (await e.add('Ana plays the theremin', { userId: 'ana', metadata: { mdkeyname: 'mdsecret' } }))
    .results[0]!.id;
  const updated = (await e.add('Ana hides a quokka', { userId: 'ana' })).results[0]!.id;
  await e.update(updated, 'Ana hides a zeppelin');
  const chat = e.conversation('t1', { userId: 'ana' });
  await chat.add({ role: 'user', content: 'my narwhal is ill', metadata: { mood: 'mdsecret' } });
  await e.blocks('helper', { userId: 'ana' }).set('human', 'Ana, armadillo fan');
  const mem = e.system({ sessionId: 's1' });
  await mem.remember('gondola-plan', 'the gondola leaves at nine');
  await mem.addTrace('plan', 'thinking about the gondola', { why: ['quokka'] }, 0.5);
  await e.flush();
  return { kept, updated };
}

export function atRestTests(where: string): void {
  describe(`encryption at rest (${where})`, () => {
    it('every table is sealed or kept in clear on purpose, and an unlisted one is refused', async () => {
      const name = unique('tables');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      await e.close();
      const listed = new Set([...Object.keys(SEALED_TABLES), ...CLEAR_TABLES]);
      for (const table of ALL_TABLES) expect(listed.has(table), table).toBe(true);
      const raw = await rawRows(name);
      for (const table of Object.keys(raw)) expect(listed.has(table), table).toBe(true);
      expect(raw['changes']!.length).toBeGreaterThan(-1);
    });

    it('a raw read of every table finds no text, metadata, word or vector, after writes, deletion, forget and reopen', async () => {
      const name = unique('sealed');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const { updated } = await feed(e);
      await expectNothingReadable(name, SECRET_WORDS, SECRET_TEXTS);
      expect((await e.search('zeppelin', { userId: 'ana' })).results[0]?.memory).toBe('Ana hides a zeppelin');
      await e.delete(updated);
      await e.forget({ userId: 'ana' });
      await e.add('Bo keeps a heron', { userId: 'bo' });
      await e.close();
      await expectNothingReadable(name, [...SECRET_WORDS, 'heron'], [...SECRET_TEXTS, 'Bo keeps a heron']);
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      expect((await again.search('heron', { userId: 'bo' })).results.map((r) => r.memory)).toEqual([
        'Bo keeps a heron',
      ]);
      expect((await again.stats()).damaged).toBe(0);
      await again.close();
      await expectNothingReadable(name, [...SECRET_WORDS, 'heron'], [...SECRET_TEXTS, 'Bo keeps a heron']);
    });

    it('an export is plain and imports into an encrypted store, which stays sealed', async () => {
      const source = await Engram.open({ name: unique('src'), embedder: embedder(), encryption: PASS });
      await feed(source);
      const file = await source.export();
      await source.close();
      expect(await file.text()).toContain('zeppelin');
      const name = unique('imported');
      const target = await Engram.import(file, { name, mode: 'merge', embedder: embedder(), encryption: PASS });
      expect((await target.search('theremin', { userId: 'ana' })).results[0]?.memory).toBe('Ana plays the theremin');
      expect((await target.recall.textSearch('narwhal')).total).toBe(1);
      await target.close();
      await expectNothingReadable(name, SECRET_WORDS, SECRET_TEXTS);
    });

    it('sync between two encrypted stores carries memories, updates and deletions; both stay sealed', async () => {
      const target = new MemoryTarget();
      const sync = { target, kdfIterations: 1000, retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 } };
      const names = [unique('sync-a'), unique('sync-b')];
      const clock = manualClock();
      const [a, b] = await Promise.all(
        names.map((name) => Engram.open({ name, embedder: embedder(), now: clock.now, encryption: PASS })),
      );
      const kept = (await a!.add('Ana plays the theremin', { userId: 'ana', metadata: { mdkeyname: 'mdsecret' } }))
        .results[0]!.id;
      const changed = (await a!.add('Ana hides a quokka', { userId: 'ana' })).results[0]!.id;
      await a!.sync(sync);
      expect((await b!.sync(sync)).downloaded).toBe(2);
      clock.advance(1000);
      await a!.update(changed, 'Ana hides a zeppelin');
      await a!.delete(kept);
      await a!.sync(sync);
      await b!.sync(sync);
      expect((await b!.getAll({ userId: 'ana' })).results.map((m) => m.memory)).toEqual(['Ana hides a zeppelin']);
      expect((await b!.search('zeppelin', { userId: 'ana' })).results[0]?.id).toBe(changed);
      await a!.close();
      await b!.close();
      for (const name of names) await expectNothingReadable(name, SECRET_WORDS, SECRET_TEXTS);
    });

    it('open() refuses the wrong passphrase or key, and the wrong kind of store, before it reads or writes anything', async () => {
      const name = unique('keys');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      await e.add('Ana plays the theremin', { userId: 'ana' });
      await e.close();
      const before = JSON.stringify(await rawRows(name), (_k, v: unknown) =>
        ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v,
      );
      const opening = (encryption?: EngramOptions['encryption']) =>
        Engram.open({ name, embedder: embedder(), ...(encryption === undefined ? {} : { encryption }) });
      await expect(opening({ ...PASS, passphrase: 'incorrect horse' })).rejects.toMatchObject({
        name: 'KeyError',
        reason: 'wrong-key',
      });
      await expect(opening()).rejects.toMatchObject({ reason: 'key-needed' });
      const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      await expect(opening({ key })).rejects.toThrow(KeyError);
      const after = JSON.stringify(await rawRows(name), (_k, v: unknown) =>
        ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v,
      );
      expect(after).toBe(before);

      const plain = unique('plain');
      await (await Engram.open({ name: plain, embedder: embedder() })).close();
      await expect(Engram.open({ name: plain, embedder: embedder(), encryption: PASS })).rejects.toMatchObject({
        reason: 'not-encrypted',
      });
      await expect(
        Engram.open({ name: plain, embedder: embedder(), encryption: { passphrase: 'short' } }),
      ).rejects.toThrow('passphrase');
    });

    it('open() with a CryptoKey: the same key opens the store again, another does not', async () => {
      const name = unique('cryptokey');
      const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      const e = await Engram.open({ name, embedder: embedder(), encryption: { key } });
      await e.add('Ana plays the theremin', { userId: 'ana' });
      await e.close();
      await expectNothingReadable(name, ['theremin'], ['Ana plays the theremin']);
      const again = await Engram.open({ name, embedder: embedder(), encryption: { key } });
      expect((await again.getAll({ userId: 'ana' })).results.map((m) => m.memory)).toEqual(['Ana plays the theremin']);
      await again.close();
      const other = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
      await expect(Engram.open({ name, embedder: embedder(), encryption: { key: other } })).rejects.toMatchObject({
        reason: 'wrong-key',
      });
      await expect(Engram.open({ name, embedder: embedder(), encryption: PASS })).rejects.toMatchObject({
        reason: 'wrong-key',
      });
    });

    it('a row moved to another id or copied from another store is refused and reported; the rest opens', async () => {
      const name = unique('moved');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const a = (await e.add('Ana plays the theremin', { userId: 'ana' })).results[0]!.id;
      const b = (await e.add('Bo keeps a heron', { userId: 'bo' })).results[0]!.id;
      const c = (await e.add('Cy rides a gondola', { userId: 'cy' })).results[0]!.id;
      await e.close();
      const other = unique('other');
      const o = await Engram.open({ name: other, embedder: embedder(), encryption: PASS });
      const foreign = (await o.add('Cy rides a zeppelin', { userId: 'cy' })).results[0]!.id;
      await o.close();
      const otherRows = await rawRows(other);
      const db = new EngramDb(name);
      await db.open();
      const rowOf = async (id: string) => (await db.table('memories').get(id)) as Record<string, unknown>;
      const rowA = await rowOf(a);
      const rowB = await rowOf(b);
      // A's sealed row under B's id and B's under A's (the clear fields follow, as a swap on disk would move them).
      await db.table('memories').bulkPut([
        { ...rowA, id: b, $: rowB['$'] },
        { ...rowB, id: a, $: rowA['$'] },
      ]);
      // The other store's row (same passphrase, another store key) in place of C's.
      const foreignRow = otherRows['memories']!.find((r) => r['id'] === foreign)!;
      await db.table('memories').put({ ...foreignRow, id: c });
      db.close();

      const damaged: string[] = [];
      const again = await Engram.open({
        name,
        embedder: embedder(),
        encryption: PASS,
        onProgress: (p) => {
          if (p.phase === 'damaged') damaged.push(p.damaged!.key);
        },
      });
      expect(await again.get(a)).toBeUndefined();
      expect(await again.get(b)).toBeUndefined();
      expect(await again.get(c)).toBeUndefined();
      const stats = await again.stats();
      expect(stats.damagedRows.map((r) => `${r.table}:${r.key}`).sort()).toEqual(
        [`memories:${a}`, `memories:${b}`, `memories:${c}`].sort(),
      );
      expect(damaged.sort()).toEqual([a, b, c].sort());
      // The rest of the store still works: a new memory is written, found and read back.
      await again.add('Di flies a kite', { userId: 'di' });
      expect((await again.search('kite', { userId: 'di' })).results.map((r) => r.memory)).toEqual(['Di flies a kite']);
      await again.close();
    });

    it('a core block moved to another owner key is refused and reported, by key and in a list', async () => {
      const name = unique('blocks');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      await e.blocks('helper', { userId: 'ana' }).set('human', 'Ana, armadillo fan');
      await e.blocks('helper', { userId: 'bo' }).set('human', 'Bo, heron fan');
      await e.blocks('helper').set('persona', 'A helpful agent');
      await e.close();
      const db = new EngramDb(name);
      await db.open();
      const table = db.table('coreBlocks');
      const keys = (await table.toCollection().primaryKeys()) as string[];
      const rows = (await table.toArray()) as Record<string, unknown>[];
      const ana = keys.findIndex((k) => k.includes('ana'));
      const bo = keys.findIndex((k) => k.includes('bo'));
      // Ana's sealed block under Bo's key and Bo's under Ana's, with their clear fields.
      await table.bulkPut([rows[ana], rows[bo]], [keys[bo]!, keys[ana]!]);
      db.close();
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      expect(await again.blocks('helper', { userId: 'ana' }).get('human')).toBeUndefined();
      expect(await again.blocks('helper', { userId: 'bo' }).list()).toEqual([]);
      expect((await again.blocks('helper').get('persona'))?.value).toBe('A helpful agent');
      expect((await again.stats()).damagedRows.map((r) => r.key).sort()).toEqual([keys[ana], keys[bo]].sort());
      await again.close();
    });

    it('an older version of a memory, vector or block put back under its id, or a deleted memory’s, is refused and reported; the rest opens', async () => {
      const name = unique('rolled-back');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const a = (await e.add('Ana plays the theremin', { userId: 'ana' })).results[0]!.id;
      const b = (await e.add('Bo keeps a heron', { userId: 'bo' })).results[0]!.id;
      const c = (await e.add('Cy rides a gondola', { userId: 'cy' })).results[0]!.id;
      await e.blocks('helper', { userId: 'ana' }).set('human', 'Ana, armadillo fan');
      await e.close();
      const old = await rawRows(name);
      const blockKeys = await (async () => {
        const db = new EngramDb(name);
        await db.open();
        try {
          return (await db.table('coreBlocks').toCollection().primaryKeys()) as string[];
        } finally {
          db.close();
        }
      })();
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      await again.update(a, 'Ana plays the tuba');
      await again.blocks('helper', { userId: 'ana' }).set('human', 'Ana, heron fan');
      await again.delete(c);
      await again.close();

      // The disk's older copies put back: A's memory and vector rows, Ana's block, and C's row from before its deletion.
      const db = new EngramDb(name);
      await db.open();
      const oldRow = (table: string, id: string) => old[table]!.find((r) => r['id'] === id)!;
      await db.table('memories').bulkPut([oldRow('memories', a), oldRow('memories', c)]);
      await db.table('vectors').put(oldRow('vectors', a));
      await db.table('coreBlocks').put(old['coreBlocks']![0], blockKeys[0]);
      // Without the index snapshot the index is rebuilt from the vector rows, so the vector row is read too.
      await db.table('meta').where('key').startsWith('indexSnapshot').delete();
      db.close();

      const damaged: string[] = [];
      const opened = await Engram.open({
        name,
        embedder: embedder(),
        encryption: PASS,
        onProgress: (p) => {
          if (p.phase === 'damaged') damaged.push(`${p.damaged!.table}:${p.damaged!.key}`);
        },
      });
      expect(await opened.get(a)).toBeUndefined();
      expect(await opened.get(c)).toBeUndefined();
      expect(await opened.blocks('helper', { userId: 'ana' }).get('human')).toBeUndefined();
      expect((await opened.search('theremin', { userId: 'ana' })).results).toEqual([]);
      const rows = (await opened.stats()).damagedRows;
      const reported = rows.map((r) => `${r.table}:${r.key}`);
      for (const row of [`memories:${a}`, `memories:${c}`, `vectors:${a}`, `coreBlocks:${blockKeys[0]}`])
        expect(reported, row).toContain(row);
      expect(rows.find((r) => r.key === a && r.table === 'memories')?.reason).toMatch(/older version/);
      // A deleted memory keeps its text-free tombstone: the row put back is an older version of it.
      expect(rows.find((r) => r.key === c && r.table === 'memories')?.reason).toMatch(/older version/);
      expect(damaged).toEqual(expect.arrayContaining([`memories:${a}`, `vectors:${a}`]));
      // The rest of the store opens and works.
      expect((await opened.get(b))?.memory).toBe('Bo keeps a heron');
      expect((await opened.search('heron', { userId: 'bo' })).results.map((r) => r.memory)).toEqual([
        'Bo keeps a heron',
      ]);
      await opened.add('Di flies a kite', { userId: 'di' });
      expect((await opened.search('kite', { userId: 'di' })).results.map((r) => r.memory)).toEqual(['Di flies a kite']);
      await opened.close();
    });

    it('freshness survives many writes, a reopen from the saved versions, and a second instance writing', async () => {
      const name = unique('fresh-many');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const ids: string[] = [];
      for (let i = 0; i < 30; i++)
        ids.push((await e.add(`note number ${i} about birds`, { userId: 'u' })).results[0]!.id);
      for (const id of ids.slice(0, 10)) await e.update(id, `changed note ${id}`);
      const other = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      await other.update(ids[20]!, 'changed by the other instance');
      expect((await e.get(ids[20]!))?.memory).toBe('changed by the other instance');
      await other.close();
      await e.close();
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      expect((await again.getAll({ userId: 'u' })).results).toHaveLength(30);
      expect((await again.get(ids[20]!))?.memory).toBe('changed by the other instance');
      expect((await again.stats()).damagedRows).toEqual([]);
      await again.close();
    });

    it("one add() journals its rows in one part: each memory's row, vector and terms together", async () => {
      const name = unique('fresh-parts');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      await e.add('Ana plays the theremin', { userId: 'ana' });
      const texts = ['Bo keeps a heron', 'Cy rows at dawn', 'Di flies a kite'];
      const added = await e.add(
        texts.map((content) => ({ role: 'user' as const, content })),
        { userId: 'bo', infer: false },
      );
      const ids = added.results.map((r) => r.id);
      // Read while the store is open: its close saves the ledger and drops the journal.
      const { openStore } = await import('../../lib/engine/open-store.js');
      const { db } = await openStore(name, PASS);
      const journal = (await db.meta.where('key').startsWith('fresh/').toArray())
        .filter((r) => /^fresh\/\d+\/\d+$/.test(r.key))
        .map((r) => r.value as { n: number; part: number; entries: [string, string, number][] });
      db.close();
      await e.close();
      const named = (table: string, id: string) =>
        journal.filter((p) => p.entries.some(([t, k]) => t === table && (k === id || k.includes(`"${id}"`))));
      const rowParts = ids.flatMap((id) => ['memories', 'vectors', 'terms'].map((t) => named(t, id)));
      for (const found of rowParts) expect(found).toHaveLength(1);
      expect(new Set(rowParts.flat()).size).toBe(1);
      // Then one part each for what follows an answer (the statistics, the log's end, the history
      // entries, whose keys IndexedDB makes), not one for each table of the rows.
      const { n } = rowParts[0]![0]!;
      expect(journal.filter((p) => p.n === n).length).toBeLessThanOrEqual(4);
    });

    it('a row whose write failed in a transaction that went on is not journaled: it opens at its earlier version', async () => {
      const name = unique('fresh-failed');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const a = (await e.add('Ana plays the theremin', { userId: 'ana' })).results[0]!.id;
      await e.close();
      const { openStore } = await import('../../lib/engine/open-store.js');
      const { db } = await openStore(name, PASS);
      const row = (await db.memories.get(a))!;
      const copy = { ...row, id: `${a}-copy` };
      // The add of an existing key fails on its own; the transaction goes on and commits the copy.
      await db.transaction('rw', db.memories, async () => {
        await expect(db.memories.bulkAdd([copy, row])).rejects.toThrow();
      });
      db.close(); // no snapshot saved: the next open reads this transaction from the journal
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      expect((await again.get(a))?.memory).toBe('Ana plays the theremin');
      expect((await again.stats()).damagedRows).toEqual([]);
      await again.close();
    });

    it('a missing freshness record is reported, and the rows are taken at their stored versions', async () => {
      const name = unique('fresh-gone');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const a = (await e.add('Ana plays the theremin', { userId: 'ana' })).results[0]!.id;
      await e.close();
      const db = new EngramDb(name);
      await db.open();
      await db.table('meta').where('key').startsWith('fresh/').delete();
      db.close();
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      expect((await again.get(a))?.memory).toBe('Ana plays the theremin');
      expect((await again.stats()).damagedRows).toMatchObject([{ table: 'meta', key: 'fresh/head' }]);
      await again.close();
    });

    it('rows sealed the older ways open as they were written: clear fields inside, terms blinded beside the seal', async () => {
      // Rows sealed now hold a 0 in place of each field kept in clear beside the seal, and a terms
      // row keeps its terms inside the seal only. Rows sealed before session 40 held the clear values
      // inside, and a terms row kept each term's keyed hash beside its seal as `k`, bound in. The spy
      // seals every memory and terms row the older way (the `k` fields are put beside them below).
      const clear = SEALED_TABLES['memories']!.clear;
      const blindedTerms = new Map<string, string[]>();
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the cipher as `this` below
      const sealWritten = RowCipher.prototype.sealWritten;
      const older = vi.spyOn(RowCipher.prototype, 'sealWritten').mockImplementation(function (
        this: RowCipher,
        maxBytes,
        write,
        aad,
      ) {
        const [format, storeId, table, fields, v] = JSON.parse(aad as string) as [
          number,
          string,
          string,
          unknown[],
          number,
        ];
        if (table !== 'memories' && table !== 'terms') return sealWritten.call(this, maxBytes, write, aad);
        const buffer = new Uint8Array(maxBytes);
        const row = decodeValue(buffer.slice(0, write(buffer))) as Record<string, unknown>;
        if (table === 'terms') {
          expect(fields[2], 'no k beside the seal').toBeNull();
          const k = (row['k'] as string[]).map((term) => this.blind('terms.k', term));
          blindedTerms.set(JSON.stringify([fields[0], fields[1]]), k);
          fields[2] = k;
        } else
          clear.forEach((f, i) => {
            if (fields[i] !== null) {
              expect(row[f], f).toBe(0);
              row[f] = fields[i];
            }
          });
        const bytes = encodeValue(row);
        return sealWritten.call(
          this,
          bytes.length,
          (into) => {
            into.set(bytes);
            return bytes.length;
          },
          JSON.stringify([format, storeId, table, fields, v]),
        );
      });
      const name = unique('older');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const plainName = unique('older-plain');
      const p = await Engram.open({ name: plainName, embedder: embedder() });
      for (const store of [e, p]) {
        await store.add('Ana plays the theremin', { userId: 'ana', metadata: { at: 'home' } });
        await store.add('Ana keeps bees', { userId: 'ana' });
        await store.add('Bo rides a gondola', { agentId: 'guide', runId: 'r1' });
      }
      older.mockRestore();
      await e.close();
      // Each terms row gets the keyed hashes its seal was bound to, and the keyword snapshot goes:
      // the open rebuilds the postings from the terms rows, opening every one.
      const db = new EngramDb(name);
      await db.open();
      const termsRows = (await db.table('terms').toArray()) as Record<string, unknown>[];
      expect(termsRows.length).toBe(3);
      for (const row of termsRows) expect(row['k']).toBeUndefined();
      await db
        .table('terms')
        .bulkPut(termsRows.map((row) => ({ ...row, k: blindedTerms.get(JSON.stringify([row['c'], row['d']])) })));
      await db.table('meta').where('key').startsWith('keywordSnapshot').delete();
      db.close();
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      // Ids and times differ between the two stores; everything else must be the same.
      const strip = (rows: Record<string, unknown>[]) =>
        rows.map((row) =>
          Object.fromEntries(Object.entries(row).filter(([k]) => !['id', 'createdAt', 'updatedAt'].includes(k))),
        );
      const all = (await again.getAll({ limit: 10 })).results;
      expect(all.length).toBe(3);
      expect(strip(all)).toEqual(strip((await p.getAll({ limit: 10 })).results));
      for (const m of all) expect(await again.get(m.id)).toEqual(m);
      for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
        const found = async (store: Engram) =>
          (await store.search('theremin', { userId: 'ana', mode })).results.map((r) => [r.memory, r.score]);
        expect(await found(again), mode).toEqual(await found(p));
      }
      expect((await again.stats()).damagedRows).toEqual([]);
      await Promise.all([again.close(), p.close()]);
    });

    it('a row in clear slipped into an encrypted store is refused and reported', async () => {
      const name = unique('clear-row');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      const a = (await e.add('Ana plays the theremin', { userId: 'ana' })).results[0]!.id;
      await e.close();
      const db = new EngramDb(name);
      await db.open();
      const row = (await db.table('memories').get(a)) as Record<string, unknown>;
      const clear: Record<string, unknown> = { ...row };
      delete clear['$'];
      await db.table('memories').put({ ...clear, text: 'Ana plays the tuba', metadata: {}, version: 1 });
      db.close();
      const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      expect(await again.get(a)).toBeUndefined();
      expect((await again.stats()).damagedRows).toMatchObject([{ table: 'memories', key: a }]);
      await again.close();
    });

    for (const snapshot of ['indexSnapshot', 'keywordSnapshot'] as const)
      for (const part of ['record', 'bytes'] as const)
        it(`a flipped bit in the ${snapshot}'s ${part} is refused and reported; the index is rebuilt and search works`, async () => {
          const name = unique('snapshot');
          const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
          for (const text of ['Ana plays the theremin', 'Bo keeps a heron', 'Cy rides a gondola'])
            await e.add(text, { userId: 'u' });
          await e.close();
          const db = new EngramDb(name);
          await db.open();
          // The record is a sealed row; its bytes are sealed apart (WebCrypto) in chunk rows beside it.
          const rowKey = part === 'record' ? snapshot : `${snapshot}:0`;
          const field = part === 'record' ? '$' : '$b';
          const row = (await db.table('meta').get(rowKey)) as Record<string, unknown> | undefined;
          expect(row?.[field]).toBeInstanceOf(Uint8Array);
          const sealed = new Uint8Array(row![field] as Uint8Array);
          sealed[sealed.length >> 1]! ^= 1;
          await db.table('meta').put({ ...row, [field]: sealed });
          db.close();
          const again = await Engram.open({ name, embedder: embedder(), encryption: PASS });
          for (const mode of ['hybrid', 'keyword'] as const)
            expect((await again.search('heron', { userId: 'u', mode })).results[0]?.memory).toBe('Bo keeps a heron');
          expect((await again.stats()).damagedRows).toContainEqual(
            expect.objectContaining({ table: 'meta', key: snapshot }),
          );
          await again.close();
        });

    it('a blinded index answers equality only: a range over it is refused, not answered wrong', async () => {
      const name = unique('blind');
      const e = await Engram.open({ name, embedder: embedder(), encryption: PASS });
      await e.add('Ana plays the theremin', { userId: 'ana' });
      await e.close();
      const { openStore } = await import('../../lib/engine/open-store.js');
      const { db } = await openStore(name, PASS);
      try {
        await expect(db.memories.where('hash').above('').toArray()).rejects.toThrow(StoreError);
        expect(await db.memories.where('userId').equals('ana').count()).toBe(1);
      } finally {
        db.close();
      }
    });

    it('a plain and an encrypted store fed the same calls answer the same: search in every mode, recall, history, export', async () => {
      const corpus = [
        ...CORPUS,
        'Sundays are for the garden and the pond',
        'Bo and Ana went to Venice to see the gondola races',
        'The quokka smiled at the camera in the garden',
        'Electronic music on Sundays with a theremin and a synthesizer',
      ];
      const run = async (encryption: EngramOptions['encryption']) => {
        const clock = manualClock();
        const name = unique('same');
        const e = await Engram.open({
          name,
          embedder: embedder(),
          now: clock.now,
          ...(encryption === undefined ? {} : { encryption }),
        });
        const ids: string[] = [];
        for (const [i, text] of corpus.entries()) {
          clock.advance(5);
          ids.push((await e.add(text, { userId: i % 2 ? 'ana' : 'bo', metadata: { i } })).results[0]!.id);
        }
        clock.advance(5);
        await e.update(ids[1]!, 'Ana hides a quokka under the garden shed');
        await e.delete(ids[4]!);
        const chat = e.conversation('t1', { userId: 'ana' });
        for (const text of corpus.slice(0, 6)) await chat.add({ role: 'user', content: text });
        const idOf = new Map(ids.map((id, i) => [id, i]));
        const strip = <T extends { id: string }>(rows: T[]) => rows.map(({ id, ...r }) => ({ n: idOf.get(id), ...r }));
        const answers: unknown[] = [];
        for (const query of ['theremin on Sundays', 'garden quokka', 'heron pond', 'gondola Venice'])
          for (const mode of ['hybrid', 'vector', 'keyword'] as const) {
            answers.push(strip((await e.search(query, { mode, limit: 5 })).results));
            answers.push(strip((await e.search(query, { mode, limit: 5, userId: 'ana' })).results));
          }
        const recall = await e.recall.textSearch('garden theremin');
        answers.push(
          recall.total,
          recall.results.map((r) => [r.content, r.role]),
        );
        answers.push((await e.history(ids[1]!)).map((h) => [h.op, h.previous, h.memory, h.version, h.at]));
        answers.push((await e.history(ids[4]!)).map((h) => [h.op, h.previous, h.memory, h.version]));
        const exported = (await (await e.export()).text())
          .split('\n')
          .filter((line) => line.includes('"text"') || line.includes('"content"'))
          .map((line) => line.replace(/"[0-9A-HJKMNP-TV-Z]{26}"/g, '"ID"').replace(/"(deviceId|origin)":"[^"]*"/g, ''));
        answers.push(exported.sort());
        await e.close();
        return answers;
      };
      const plain = await run(undefined);
      const sealed = await run(PASS);
      expect(sealed).toEqual(plain);
    });
  });
}
