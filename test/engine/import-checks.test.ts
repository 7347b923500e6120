// Import against a crafted file: the store keeps its limits, its forgetting and its scopes (issue 23).
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { digestOf } from '../../lib/engine/transfer/export-digest.js';
import { Engram, ImportError } from '../../lib/index.js';
import { rawStore, tablesHolding } from './raw-store.js';

const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 64 });
const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;

type Line = Record<string, unknown> & { type: string; row?: Record<string, unknown> };

/** The file's lines (header and records), edited by `edit`, with the end line and its digest made anew. */
async function rewrite(file: Blob, edit: (lines: Line[]) => Line[]): Promise<string> {
  const lines = (await file.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
  const body = edit(lines.filter((l) => l.type !== 'end')).map((l) => JSON.stringify(l));
  const end = { type: 'end', records: body.length - 1, digest: await digestOf(body) };
  return [...body, JSON.stringify(end)].map((l) => `${l}\n`).join('');
}

describe('import() of backups', () => {
  it('import() takes back an export holding per-user blocks of one label (and the agent’s own)', async () => {
    const a = await Engram.open({ name: unique('blocks-src'), embedder: embedder() });
    await a.blocks('helper').set('human', 'Shared notes', { shared: true });
    await a.blocks('helper', { userId: 'ana' }).set('human', 'Name: Ana');
    await a.blocks('helper', { userId: 'bo' }).set('human', 'Name: Bo');
    const file = await a.export();
    await a.close();
    for (const mode of ['replace', 'merge'] as const) {
      const b = await Engram.import(file, { name: unique(`blocks-${mode}`), mode, embedder: embedder() });
      expect((await b.blocks('helper').get('human'))!.value).toBe('Shared notes');
      expect((await b.blocks('helper', { userId: 'ana' }).get('human'))!.value).toBe('Name: Ana');
      expect((await b.blocks('helper', { userId: 'bo' }).get('human'))!.value).toBe('Name: Bo');
      expect(await (await b.export()).text()).toMatch(/"Name: Bo"/);
      await b.close();
    }
  });
});

describe('import() holds a file to the store’s limits', () => {
  async function oneMemory(): Promise<{ file: Blob; id: string }> {
    const a = await Engram.open({ name: unique('limits-src'), embedder: embedder() });
    const { results } = await a.add('Ana likes tea', { userId: 'ana' });
    const file = await a.export();
    await a.close();
    return { file, id: results[0]!.id };
  }
  const lineOf = (file: string, needle: string): number => file.split('\n').findIndex((l) => l.includes(needle)) + 1;
  async function refusal(file: string, options: { maxContentBytes?: number } = {}): Promise<ImportError> {
    const name = unique('limits-dst');
    const err = await Engram.import(file, { name, mode: 'replace', embedder: embedder(), ...options }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ImportError);
    const b = await Engram.open({ name, embedder: embedder() });
    expect((await b.getAll()).total).toBe(0);
    await b.close();
    return err as ImportError;
  }

  it('import() refuses a memory text over maxContentBytes (2 MiB against the default 1 MiB), naming the line', async () => {
    const { file, id } = await oneMemory();
    const big = await rewrite(file, (lines) =>
      lines.map((l) =>
        l.type === 'memory' && l.row!['id'] === id ? { ...l, row: { ...l.row, text: 'x'.repeat(2 * 1024 * 1024) } } : l,
      ),
    );
    const err = await refusal(big);
    expect(err.line).toBe(lineOf(big, 'xxxxxxxx'));
    expect(err.message).toMatch(/memory: text: is 2097152 bytes, over the maximum of 1048576/);
  });

  it('import() holds the file to the target store’s own maxContentBytes', async () => {
    const { file } = await oneMemory();
    const err = await refusal(await file.text(), { maxContentBytes: 8 });
    expect(err.message).toMatch(/over the maximum of 8/);
  });

  it('import() refuses a userId of 100,000 characters and an oversized history entry', async () => {
    const { file, id } = await oneMemory();
    const longId = await rewrite(file, (lines) =>
      lines.map((l) =>
        l.type === 'memory' && l.row!['id'] === id ? { ...l, row: { ...l.row, userId: 'u'.repeat(100_000) } } : l,
      ),
    );
    expect((await refusal(longId)).message).toMatch(/memory: userId: must be at most 512 characters/);
    // The memory was never changed, so the file holds no history line for it (its add is written at
    // its first change): the crafted file brings one.
    const bigHistory = await rewrite(file, (lines) => [
      ...lines,
      {
        type: 'history',
        row: {
          table: 'memories',
          recordId: id,
          op: 'update',
          before: null,
          after: { text: 'y'.repeat(2 * 1024 * 1024) },
          at: 1,
        },
      },
    ]);
    expect((await refusal(bigHistory)).message).toMatch(/history: after.text: is 2097152 bytes/);
  });
});

describe('import() keeps forgetting', () => {
  it('import() leaves no text in the history of a memory the file has deleted', async () => {
    const a = await Engram.open({ name: unique('forgot-src'), embedder: embedder() });
    const { results } = await a.add('Secret plan alpha', { userId: 'ana' });
    const id = results[0]!.id;
    await a.update(id, 'Secret plan beta');
    // A tombstone whose history still has text (an older engram's file, or a crafted one).
    const file = await rewrite(await a.export(), (lines) =>
      lines.map((l) =>
        l.type === 'memory' && l.row!['id'] === id
          ? { ...l, row: { ...l.row, deletedAt: 99, text: '', hash: '', metadata: {} }, vector: null }
          : l,
      ),
    );
    expect(file).toMatch(/Secret plan alpha/);
    await a.close();
    for (const mode of ['replace', 'merge'] as const) {
      const name = unique(`forgot-${mode}`);
      const b = await Engram.import(file, { name, mode, embedder: embedder() });
      const history = await b.history(id);
      expect(history.length).toBeGreaterThan(0);
      expect(JSON.stringify(history)).not.toMatch(/Secret/);
      await b.close();
      expect(tablesHolding(await rawStore(name), 'secret')).toEqual([]);
    }
  });

  it('import(merge) of a tombstone over a live memory forgets the store’s own history of it', async () => {
    const a = await Engram.open({ name: unique('tomb-src'), embedder: embedder() });
    const { results } = await a.add('Private diary entry', { userId: 'ana' });
    const id = results[0]!.id;
    const live = await a.export();
    await a.delete(id);
    const deleted = await a.export();
    await a.close();
    const name = unique('tomb-dst');
    const b = await Engram.import(live, { name, mode: 'replace', embedder: embedder() });
    await b.close();
    const c = await Engram.import(deleted, { name, mode: 'merge', embedder: embedder() });
    expect(await c.get(id)).toBeUndefined();
    expect(JSON.stringify(await c.history(id))).not.toMatch(/diary/);
    await c.close();
    expect(tablesHolding(await rawStore(name), 'diary')).toEqual([]);
  });
});

describe('import(merge) of known ids', () => {
  async function storeWithAna(): Promise<{ name: string; id: string; file: Blob }> {
    const name = unique('known');
    const a = await Engram.open({ name, embedder: embedder() });
    const { results } = await a.add('Ana lives in Porto', { userId: 'ana' });
    const file = await a.export();
    await a.close();
    return { name, id: results[0]!.id, file };
  }

  it('import(merge) refuses a file that moves a known memory to another scope, naming the line, and writes nothing', async () => {
    const { name, id, file } = await storeWithAna();
    const moved = await rewrite(file, (lines) =>
      lines.map((l) =>
        l.type === 'memory' && l.row!['id'] === id ? { ...l, row: { ...l.row, userId: 'mallory', version: 9 } } : l,
      ),
    );
    const line = moved.split('\n').findIndex((l) => l.includes('"mallory"')) + 1;
    const err = await Engram.import(moved, { name, mode: 'merge', embedder: embedder() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ImportError);
    expect((err as ImportError).line).toBe(line);
    expect((err as Error).message).toMatch(/userId "ana".*"mallory".*another scope/);
    const b = await Engram.open({ name, embedder: embedder() });
    expect(await b.get(id)).toMatchObject({ memory: 'Ana lives in Porto', userId: 'ana' });
    expect((await b.getAll({ userId: 'mallory' })).results).toEqual([]);
    await b.close();
  });

  it('import(merge) that overwrites a known memory records the change in its history', async () => {
    const { name, id, file } = await storeWithAna();
    const newer = await rewrite(file, (lines) =>
      lines
        .filter((l) => l.type !== 'history')
        .map((l) =>
          l.type === 'memory' && l.row!['id'] === id
            ? {
                ...l,
                row: {
                  ...l.row,
                  text: 'Ana lives in Lisbon',
                  version: 2,
                  updatedAt: (l.row!['updatedAt'] as number) + 1,
                },
              }
            : l,
        ),
    );
    const b = await Engram.import(newer, { name, mode: 'merge', embedder: embedder() });
    expect(await b.get(id)).toMatchObject({ memory: 'Ana lives in Lisbon' });
    const history = await b.history(id);
    expect(history.map((h) => [h.op, h.previous, h.memory])).toEqual([
      ['ADD', null, 'Ana lives in Porto'],
      ['UPDATE', 'Ana lives in Porto', 'Ana lives in Lisbon'],
    ]);
    await b.close();
  });
});
