// engram.sync() between two stores through the test server (or a real Qdrant when
// QDRANT_URL is set): convergence, deletions, conflicts, messages, encryption.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncError, ValidationError } from '../../lib/errors.js';
import { EngramDb } from '../../lib/store/schema.js';
import { SYNC_PUSHED_SEQ_KEY } from '../../lib/sync/store-host.js';
import { type TargetFixture } from './targets.js';
import { device, httpTarget, on, type Device } from './sync-helpers.js';

describe('engram.sync()', () => {
  let fixture: TargetFixture;
  let a: Device;
  let b: Device;
  beforeEach(async () => {
    fixture = await httpTarget();
    a = await device();
    b = await device();
  });
  afterEach(async () => {
    await a.engram.close();
    await b.engram.close();
    if (fixture.server !== undefined) expect(fixture.server.violations).toEqual([]);
    await fixture.dispose();
  });

  it('sync() carries memories and core blocks from one store to another, ids and all', async () => {
    const { results } = await a.engram.add('Ana moved to Lisbon', { userId: 'ana' });
    await a.engram.add('Ana plays the cello', { userId: 'ana', metadata: { topic: 'music' } });
    await a.engram.blocks('helper').set('human', 'Name: Ana');
    expect(await a.engram.sync(on(fixture))).toEqual({ uploaded: 3, downloaded: 0, deleted: 0, conflicts: 0 });
    expect(await b.engram.sync(on(fixture))).toEqual({ uploaded: 0, downloaded: 3, deleted: 0, conflicts: 0 });
    const mine = await a.engram.getAll({ userId: 'ana' });
    const theirs = await b.engram.getAll({ userId: 'ana' });
    expect(theirs.results).toEqual(mine.results);
    expect(theirs.results.map((m) => m.id)).toContain(results[0]!.id);
    expect((await b.engram.blocks('helper').get('human'))?.value).toBe('Name: Ana');
    // The pulled memories are searchable on the other device.
    const hits = await b.engram.search('cello', { userId: 'ana', limit: 1 });
    expect(hits.results[0]?.memory).toBe('Ana plays the cello');
  });

  it('sync() with nothing new moves nothing, and echoes nothing back', async () => {
    await a.engram.add('one', { userId: 'u' });
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    expect(await b.engram.sync(on(fixture))).toEqual({ uploaded: 0, downloaded: 0, deleted: 0, conflicts: 0 });
    expect(await a.engram.sync(on(fixture))).toEqual({ uploaded: 0, downloaded: 0, deleted: 0, conflicts: 0 });
  });

  it('sync() propagates a deletion, as a tombstone without text', async () => {
    const { results } = await a.engram.add('secret plan', { userId: 'u' });
    const id = results[0]!.id;
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    expect(await b.engram.get(id)).toBeDefined();
    expect(await a.engram.delete(id)).toBe(true);
    expect((await a.engram.sync(on(fixture))).uploaded).toBe(1);
    expect((await b.engram.sync(on(fixture))).deleted).toBe(1);
    expect(await b.engram.get(id)).toBeUndefined();
    if (fixture.server !== undefined) {
      const stored = JSON.stringify(fixture.server.points(fixture.collection));
      expect(stored).not.toContain('secret plan');
    }
  });

  it('deleteAll({ userId }) on one device removes that user from the server and the other device', async () => {
    await a.engram.add('Ana likes figs', { userId: 'ana' });
    await a.engram.add('Ana lives in Porto', { userId: 'ana' });
    await a.engram.add('Bo likes tea', { userId: 'bo' });
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    expect(await a.engram.deleteAll({ userId: 'ana' })).toBe(2);
    await a.engram.sync(on(fixture));
    expect((await b.engram.sync(on(fixture))).deleted).toBe(2);
    expect((await b.engram.getAll({ userId: 'ana' })).total).toBe(0);
    expect((await b.engram.getAll({ userId: 'bo' })).total).toBe(1);
    if (fixture.server !== undefined) {
      const stored = JSON.stringify(fixture.server.points(fixture.collection));
      expect(stored).not.toContain('"ana"');
      expect(stored).not.toContain('figs');
      expect(stored).toContain('Bo likes tea');
    }
  });

  it('forget({ userId }) on one device removes that user from the server and from the other device', async () => {
    await a.engram.add('Ana is allergic to penicillin', { userId: 'ana' });
    await a.engram.add('Bo drinks green tea', { userId: 'bo' });
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    a.clock.advance(1_000);
    await a.engram.forget({ userId: 'ana' });
    await a.engram.sync(on(fixture));
    expect((await b.engram.sync(on(fixture))).deleted).toBe(1);
    expect((await b.engram.getAll({ userId: 'ana' })).total).toBe(0);
    expect((await b.engram.getAll({ userId: 'bo' })).total).toBe(1);
    if (fixture.server !== undefined) {
      const stored = JSON.stringify(fixture.server.points(fixture.collection));
      expect(stored).not.toContain('penicillin');
      expect(stored).not.toContain('"ana"');
    }
  });

  it('two devices editing one memory converge on the later edit; the loser stays in history', async () => {
    const { results } = await a.engram.add('meeting at 10', { userId: 'u' });
    const id = results[0]!.id;
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    a.clock.advance(1_000);
    await a.engram.update(id, 'meeting at 11');
    b.clock.advance(2_000);
    await b.engram.update(id, 'meeting at 12');
    await a.engram.sync(on(fixture));
    const second = await b.engram.sync(on(fixture));
    expect(second.conflicts).toBe(1);
    await a.engram.sync(on(fixture));
    expect((await a.engram.get(id))?.memory).toBe('meeting at 12');
    expect((await b.engram.get(id))?.memory).toBe('meeting at 12');
    // b kept its own (winning) edit and recorded a's losing one; a recorded its own before it lost.
    expect((await b.engram.history(id)).map((h) => h.previous)).toContain('meeting at 11');
    expect((await a.engram.history(id)).map((h) => h.memory)).toContain('meeting at 11');
    // Each history begins with the memory's creation, pulled or made here, written at its first change.
    for (const device of [a, b])
      expect((await device.engram.history(id))[0]).toMatchObject({ op: 'ADD', memory: 'meeting at 10' });
  });

  it('an edit racing a deletion: the later one wins on both devices', async () => {
    const { results } = await a.engram.add('draft one', { userId: 'u' });
    const { results: other } = await a.engram.add('draft two', { userId: 'u' });
    const [first, second] = [results[0]!.id, other[0]!.id];
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    // first: deleted on a, edited later on b -> the edit wins.
    a.clock.advance(1_000);
    await a.engram.delete(first);
    b.clock.advance(2_000);
    await b.engram.update(first, 'draft one, revised');
    // second: edited on b, deleted later on a -> the deletion wins.
    await b.engram.update(second, 'draft two, revised');
    a.clock.advance(5_000);
    await a.engram.delete(second);
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    await a.engram.sync(on(fixture));
    for (const d of [a, b]) {
      expect((await d.engram.get(first))?.memory).toBe('draft one, revised');
      expect(await d.engram.get(second)).toBeUndefined();
    }
  });

  it('messages sync only when include asks for them', async () => {
    const chat = a.engram.conversation('t1', { agentId: 'helper' });
    await chat.add([
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: 'Hi! How can I help?' },
    ]);
    await a.engram.sync(on(fixture));
    await b.engram.sync(on(fixture));
    expect(await b.engram.conversation('t1', { agentId: 'helper' }).getMessages()).toEqual([]);
    const withMessages = on(fixture, { include: ['memories', 'blocks', 'messages'] });
    expect((await a.engram.sync(withMessages)).uploaded).toBe(2);
    expect((await b.engram.sync(withMessages)).downloaded).toBe(2);
    const theirs = await b.engram.conversation('t1', { agentId: 'helper' }).getMessages();
    expect(theirs.map((m) => m.content)).toEqual(['Hello there', 'Hi! How can I help?']);
    // A deleted message goes as a tombstone and is deleted on the other device.
    a.clock.advance(1_000);
    expect(await chat.delete(0)).toBe(1);
    expect((await a.engram.sync(withMessages)).uploaded).toBe(1);
    expect((await b.engram.sync(withMessages)).deleted).toBe(1);
    const left = await b.engram.conversation('t1', { agentId: 'helper' }).getMessages();
    expect(left.map((m) => m.content)).toEqual(['Hi! How can I help?']);
  });

  it('sync() after close() rejects with ClosedError', async () => {
    const { openTemp } = await import('../helpers.js');
    const closed = await openTemp();
    await closed.close();
    await expect(closed.sync(on(fixture))).rejects.toMatchObject({ name: 'ClosedError' });
    await expect(closed.syncStatus()).rejects.toMatchObject({ name: 'ClosedError' });
    await closed.stopAutoSync(); // idempotent, even closed
  });

  it('refuses a collection made for another embedder, with a typed error', async () => {
    await a.engram.add('x', { userId: 'u' });
    await a.engram.sync(on(fixture));
    const { HashEmbedder } = await import('../../lib/index.js');
    const { openTemp } = await import('../helpers.js');
    const other = await openTemp({ embedder: new HashEmbedder({ dimensions: 8 }) });
    try {
      const e = await other.sync(on(fixture)).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(SyncError);
      expect((e as SyncError).reason).toBe('incompatible');
    } finally {
      await other.close();
    }
  });

  it('records the change-log position compaction must keep, and reports it in syncStatus()', async () => {
    await a.engram.add('one', { userId: 'u' });
    await a.engram.add('two', { userId: 'u' });
    await a.engram.sync(on(fixture));
    const status = await a.engram.syncStatus();
    const [state] = Object.values(status.cursors);
    expect(state?.seeded).toEqual(['memory', 'block']);
    expect(state?.pushedSeq).toBeGreaterThanOrEqual(2);
    expect(status.lastResult?.uploaded).toBe(2);
    const db = new EngramDb(a.engram.name);
    try {
      expect((await db.meta.get(SYNC_PUSHED_SEQ_KEY))?.value).toBe(state?.pushedSeq);
    } finally {
      db.close();
    }
  });

  it('sync() validates its options at the door', async () => {
    await expect(a.engram.sync(JSON.parse('{}') as never)).rejects.toThrow(ValidationError);
    await expect(a.engram.sync({ url: 'ftp://x' })).rejects.toThrow(/options.url/);
    await expect(a.engram.sync({ url: fixture.url, include: ['notes'] as never })).rejects.toThrow(/options.include/);
    await expect(a.engram.sync({ url: fixture.url, batchSize: 1000 })).rejects.toThrow(/options.batchSize/);
    await expect(a.engram.sync({ url: fixture.url, collection: 'a b' })).rejects.toThrow(/options.collection/);
    await expect(a.engram.sync({ url: fixture.url, encryption: { passphrase: 'short' } })).rejects.toThrow(
      /passphrase/,
    );
  });
});
