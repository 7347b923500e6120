/**
 * The switch of a re-embed (lib/engine/vectors/reembed.ts) only flips the recorded model;
 * readers take a row's staged vector of that model (lib/store/current-vector.ts) until the
 * rows are rewritten in small transactions. Shared by the Node (fake-indexeddb) and
 * Chromium (real IndexedDB) tests: a search during the switch does not wait for the
 * rewrite, a crash between the switch and the rewrite leaves the new model's vectors
 * everywhere, and forget() during the rewrite removes the text everywhere.
 */
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { ClosedError, Engram, type IndexProgress } from '../../lib/index.js';
import { MemoryTarget } from '../../lib/sync/memory-target.js';
import { EngramDb } from '../../lib/store/schema.js';
import {
  allFound,
  fill,
  HookedEmbedder,
  NEW,
  NEW_ID,
  OLD_ID,
  open,
  rawVectors,
  text,
  unique,
} from './reembed-cases.js';

/** Fast retries and key derivation (test/sync/sync-helpers.ts reads files: not for Chromium). */
const FAST = { retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 50 }, kdfIterations: 1_000, timeoutMs: 2_000 };

/** True on the new index's last 'rebuild' report: the switch has committed, the rows are not rewritten yet. */
const switchedAndFilled = (p: IndexProgress): boolean => p.phase === 'rebuild' && p.total > 0 && p.done === p.total;

/** The memory lines of an export, parsed. */
async function exportedMemories(
  e: Engram,
): Promise<{ row: { id: string; text: string }; vector: { embedderId: string } | null }[]> {
  const lines = (await (await e.export()).text()).trim().split('\n');
  return lines.map((l) => JSON.parse(l) as { type: string }).filter((l) => l.type === 'memory') as unknown as {
    row: { id: string; text: string };
    vector: { embedderId: string } | null;
  }[];
}

export function reembedSwitchTests(where: string): void {
  describe(`engram.reembed(): the switch flips the model, the rows follow (${where})`, () => {
    it('reembed(): a search issued during the switch completes while the rows are not yet rewritten', async () => {
      const name = unique('flip');
      const e = await open(name);
      await fill(e, 0, 150);
      // A second connection holds `vectors` (which the rewrite writes) from the switch until the search answered.
      const raw = new EngramDb(name);
      await raw.open();
      let stagedWhenHeld = -1;
      let answered = false;
      let held: Promise<void> | undefined;
      let searched: Promise<boolean> | undefined;
      const result = await e.reembed(new HookedEmbedder(), {
        onProgress: (p) => {
          if (held !== undefined || !switchedAndFilled(p)) return;
          held = raw.transaction('rw', raw.vectors, async () => {
            stagedWhenHeld = (await raw.vectors.toArray()).filter((v) => v.staged?.embedderId === NEW_ID).length;
            while (!answered) await raw.vectors.get('none');
          });
          searched = allFound(e, 0, 10).finally(() => {
            answered = true;
          });
        },
      });
      await held;
      raw.close();
      expect(result).toEqual({ total: 150, embedded: 150 });
      // The switch had committed (the new index was filling) and not one row was rewritten when the search began:
      // the rewrite could only start once the search had answered.
      expect(stagedWhenHeld).toBe(150);
      expect(await searched).toBe(true);
      expect(await Engram.storedEmbedder(name)).toEqual({ id: NEW_ID, dimensions: NEW });
      expect(await allFound(e, 0, 150)).toBe(true);
      await e.close();
      const rows = await rawVectors(name);
      expect(rows.every((v) => v.embedderId === NEW_ID && v.staged === undefined && v.vector.length === NEW)).toBe(
        true,
      );
    });

    it('reembed() closed after the switch, before the rewrite: reopened, the new model’s vectors are read everywhere', async () => {
      const name = unique('crash');
      const e = await open(name);
      await fill(e, 0, 60);
      let closing: Promise<void> | undefined;
      const run = e.reembed(new HookedEmbedder(), {
        onProgress: (p) => {
          if (closing === undefined && switchedAndFilled(p)) closing = e.close();
        },
      });
      await expect(run).rejects.toThrow(ClosedError);
      await closing;
      // The crash's state: the store records the new model, every row still holds it staged beside the old vector.
      expect(await Engram.storedEmbedder(name)).toEqual({ id: NEW_ID, dimensions: NEW });
      const left = await rawVectors(name);
      expect(left).toHaveLength(60);
      expect(left.every((v) => v.embedderId === OLD_ID && v.staged?.embedderId === NEW_ID)).toBe(true);

      const again = await Engram.open({ name, embedder: new HashEmbedder({ dimensions: NEW }) });
      // Search: the index is filled from the staged vectors.
      expect([(await again.ready()).embedderId, (await again.ready()).size]).toEqual([NEW_ID, 60]);
      expect(await allFound(again, 0, 60)).toBe(true);
      // Near-duplicate check: the same statement said again folds into the standing memory.
      const standing = (await again.getAll({ userId: 'u', limit: 100 })).results.find((m) => m.memory === text(7))!;
      expect((await again.add(`${text(7)}!`, { userId: 'u' })).results[0]).toMatchObject({
        id: standing.id,
        event: 'NONE',
      });
      // Export: every memory with the new model's vector, which a store on the new model imports.
      const lines = await exportedMemories(again);
      expect(lines).toHaveLength(60);
      expect(lines.every((l) => l.vector?.embedderId === NEW_ID)).toBe(true);
      const copy = await Engram.import(await again.export(), {
        name: unique('copy'),
        mode: 'replace',
        embedder: new HashEmbedder({ dimensions: NEW }),
      });
      expect(await allFound(copy, 0, 60)).toBe(true);
      await copy.close();
      // Sync's push: the new model's vectors (the twin refuses another length than the collection's).
      const target = new MemoryTarget();
      expect((await again.sync({ target, ...FAST })).uploaded).toBe(60);
      const pushed = target.stored().filter((p) => p.vector !== undefined);
      expect(pushed).toHaveLength(60);
      expect(pushed.every((p) => p.vector!.length === NEW)).toBe(true);
      await again.close();
    });

    it('reembed(): forget() right after the switch, while the rows are rewritten, leaves nothing of the forgotten', async () => {
      const name = unique('forget-rewrite');
      const e = await open(name);
      const anaIds = await fill(e, 0, 70, 'ana');
      await fill(e, 70, 140, 'bo');
      let forgetting: Promise<unknown> | undefined;
      const result = await e.reembed(new HookedEmbedder(), {
        onProgress: (p) => {
          if (forgetting === undefined && switchedAndFilled(p)) forgetting = e.forget({ userId: 'ana' });
        },
      });
      await forgetting;
      expect(result.total).toBe(140);
      expect((await e.search(text(3), { userId: 'ana', mode: 'vector' })).results).toEqual([]);
      expect((await e.search(text(3), { mode: 'hybrid', limit: 50 })).results.map((r) => r.userId)).not.toContain(
        'ana',
      );
      expect(await allFound(e, 70, 140, 'bo')).toBe(true);
      const lines = await exportedMemories(e);
      // Only the tombstones sync carries the deletion with: no text, no vector.
      const forgotten = lines.filter((l) => anaIds.includes(l.row.id));
      expect(forgotten.map((l) => [l.row.text, l.vector])).toEqual(anaIds.map(() => ['', null]));
      expect(lines.filter((l) => l.row.text === text(3))).toEqual([]);
      await e.close();
      const rows = await rawVectors(name);
      expect(rows.filter((r) => anaIds.includes(r.id))).toEqual([]);
      expect(rows).toHaveLength(70);
      expect(rows.every((v) => v.embedderId === NEW_ID && v.staged === undefined)).toBe(true);
    });
  });
}
