// Bounded growth: history keeps historyLimit entries per record, and the change
// log is compacted once every consumer passed an entry (sync's position and
// registered consumers always; instances on the same store catch up by reloading).
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { Engram, ValidationError } from '../../lib/index.js';
import { readLogFloor, registerLogConsumer } from '../../lib/store/change-log.js';
import { EngramDb } from '../../lib/store/schema.js';
import { openTemp } from '../helpers.js';

const embedder = (): HashEmbedder => new HashEmbedder({ dimensions: 32 });

async function counts(name: string): Promise<{ live: number; history: number; changes: number; floor: number }> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return {
      live: await db.memories.filter((m) => m.deletedAt === undefined).count(),
      history: await db.history.count(),
      changes: await db.changes.count(),
      floor: await readLogFloor(db),
    };
  } finally {
    db.close();
  }
}

async function fill(engram: Engram, n: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 250) {
    const batch = Array.from({ length: Math.min(250, n - i) }, (_, j) => ({
      role: 'user' as const,
      content: `${tag} ${i + j} sits in crate ${(i + j) % 31}`,
    }));
    ids.push(...(await engram.add(batch, { userId: 'u', infer: false, dedupe: 'off' })).results.map((r) => r.id));
  }
  return ids;
}

describe('bounded growth', () => {
  it('history keeps historyLimit versions per record; the change log and history stay within a small multiple of live rows', async () => {
    const engram = await openTemp({ embedder: embedder() });
    const ids = await fill(engram, 2500, 'note');
    await engram.search('crate', { userId: 'u' });
    // While writing goes on, the index snapshot waits for a pause (under 5000 changes), and the log keeps what it has
    // not passed; the pause, or as here flush(), takes it, so the next compaction can pass the fill.
    await engram.flush();
    for (let i = 0; i < 300; i++) await engram.update(ids[(i * 7) % ids.length]!, `note ${i} moved to shelf ${i % 13}`);
    for (const id of ids.slice(-300)) await engram.delete(id);
    const hot = ids[0]!;
    for (let i = 0; i < 200; i++) await engram.update(hot, `hot note version ${i}`);
    await engram.search('shelf', { userId: 'u' });
    const history = await engram.history(hot);
    expect(history).toHaveLength(20);
    expect(history.at(-1)!.memory).toBe('hot note version 199');
    const c = await counts(engram.name);
    expect(c.live).toBe(2200);
    // 2500 adds, 300 + 200 updates and 300 deletes were 3300 log entries: compaction keeps at most what is not passed.
    expect(c.changes).toBeLessThanOrEqual(c.live);
    expect(c.history).toBeLessThanOrEqual(2 * c.live);
    expect(c.floor).toBeGreaterThan(0);
    await engram.close();
    // Reopening restores from the snapshots and replays what the log still has.
    const again = await Engram.open({ name: engram.name, embedder: embedder() });
    expect(await again.ready()).toMatchObject({ index: 'snapshot', size: 2200 });
    expect(
      (await again.search('hot note version 199', { userId: 'u', mode: 'keyword', limit: 1 })).results[0]!.id,
    ).toBe(hot);
    await again.close();
  });

  it('historyLimit is an option of open(), checked at the door', async () => {
    const engram = await openTemp({ embedder: embedder(), historyLimit: 3 });
    const { results } = await engram.add('v0', {});
    for (let i = 1; i <= 6; i++) await engram.update(results[0]!.id, `v${i}`);
    expect((await engram.history(results[0]!.id)).map((h) => h.memory)).toEqual(['v4', 'v5', 'v6']);
    await engram.close();
    await expect(openTemp({ historyLimit: 0 })).rejects.toThrow(ValidationError);
    await expect(openTemp({ historyLimit: 2.5 })).rejects.toThrow(ValidationError);
  });

  it('compaction keeps what sync and registered consumers have not passed; an idle instance reloads past the floor', async () => {
    const name = `growth-${Math.random().toString(36).slice(2)}`;
    const a = await Engram.open({ name, embedder: embedder() });
    await fill(a, 10, 'seed');
    const db = new EngramDb(name);
    await db.open();
    const pushed = (await db.changes.orderBy(':id').last())!.seq!;
    await db.meta.put({ key: 'sync.pushedSeq', value: pushed });
    db.close();
    const b = await Engram.open({ name, embedder: embedder() });
    expect((await b.search('seed crate', { userId: 'u', limit: 50 })).results).toHaveLength(10);
    await fill(a, 2500, 'later');
    const kept = await counts(name);
    // Sync has not pushed past `pushed`: every entry after it stays.
    expect(kept.changes).toBeGreaterThanOrEqual(2500);
    const db2 = new EngramDb(name);
    await db2.open();
    expect(await db2.changes.where(':id').above(pushed).count()).toBe(2500);
    await db2.meta.put({ key: 'sync.pushedSeq', value: pushed + 2500 });
    await registerLogConsumer(db2, 'test', pushed + 1000);
    db2.close();
    // a's index snapshots are the soft consumers: under load the idle snapshot of the 2,500 may not be written
    // yet and would hold the floor where the seed left it. flush() writes them, so only sync and 'test' hold it.
    await a.flush();
    await fill(a, 1000, 'more');
    const after = await counts(name);
    expect(after.floor).toBe(pushed + 1000);
    // b was idle while a wrote and compacted: it reloads and sees everything.
    expect((await b.getAll({ userId: 'u', limit: 1 })).total).toBe(3510);
    expect((await b.search('later crate', { userId: 'u', mode: 'vector', limit: 3 })).results).toHaveLength(3);
    expect((await b.ready()).size).toBe(3510);
    expect(
      (await b.search('more 999', { userId: 'u', mode: 'keyword', limit: 3 })).results.map((r) => r.memory),
    ).toContain('more 999 sits in crate 7');
    await a.close();
    await b.close();
  });
});
