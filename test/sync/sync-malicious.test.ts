// A server without the passphrase, attacking an end-to-end encrypted collection on
// the OpenAPI-checked test server: each test edits the points the server holds, as
// a malicious Qdrant could, and checks that it can only withhold or delay, never
// change or delete, and that what was refused shows in syncStatus().
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncError } from '../../lib/errors.js';
import { HEADER_POINT_ID } from '../../lib/sync/sync-target.js';
import { stampOf } from '../../lib/sync/stamp.js';
import { idFromUuid, idToUuid } from '../../lib/util/id.js';
import { REAL_QDRANT_URL, type TargetFixture } from './targets.js';
import { device, httpTarget, on, type Device } from './sync-helpers.js';

const PASSPHRASE = 'correct horse battery staple';

type StoredPoint = ReturnType<NonNullable<TargetFixture['server']>['points']>[number];

describe.skipIf(REAL_QDRANT_URL !== undefined)(
  'engram.sync() against a malicious server (encrypted collection)',
  () => {
    let fixture: TargetFixture;
    let a: Device;
    let b: Device;
    const server = () => fixture.server!;
    const enc = (extra: { encryptVectors?: boolean } = {}) =>
      on(fixture, { encryption: { passphrase: PASSPHRASE, ...extra } });
    const memoryPoints = (): StoredPoint[] =>
      server()
        .points(fixture.collection)
        .filter((p) => p.payload['kind'] === 'memory');
    /** The point with a newer stamp and the next push counter, so every device pulls it again. */
    const restamped = (p: StoredPoint, payload: Record<string, unknown>, byMs = 60_000): StoredPoint => {
      const origin = p.payload['origin'] as string;
      const updatedAt = (p.payload['updatedAt'] as number) + byMs;
      return {
        ...p,
        payload: {
          ...p.payload,
          ...(payload as StoredPoint['payload']),
          updatedAt,
          stamp: stampOf(updatedAt, origin),
          pushSeq: (p.payload['pushSeq'] as number) + 1000,
        },
      };
    };

    beforeEach(async () => {
      fixture = await httpTarget();
      a = await device();
      b = await device();
    });
    afterEach(async () => {
      await a.engram.close();
      await b.engram.close();
      expect(server().violations).toEqual([]);
      await fixture.dispose();
    });

    it('a point marked deleted by the server deletes nothing; the refusal shows in syncStatus()', async () => {
      const { results } = await a.engram.add('Ana moved to Lisbon', { userId: 'u' });
      const id = results[0]!.id;
      await a.engram.sync(enc());
      await b.engram.sync(enc());
      const [point] = memoryPoints();
      server().replace(fixture.collection, restamped(point!, { deleted: true }));
      await b.engram.sync(enc());
      expect((await b.engram.get(id))?.memory).toBe('Ana moved to Lisbon');
      const { refused } = await b.engram.syncStatus();
      expect(refused.byReason.unauthenticated).toBe(1);
      expect(refused.total).toBe(1);
      expect(refused.recent[0]).toMatchObject({ reason: 'unauthenticated', pointId: point!.id, kind: 'memory' });
      expect(JSON.stringify(refused)).not.toContain('Lisbon');
    });

    it('an older sealed version replayed under a newer stamp rolls nothing back', async () => {
      const { results } = await a.engram.add('meeting at 10', { userId: 'u' });
      const id = results[0]!.id;
      await a.engram.sync(enc());
      const [old] = memoryPoints();
      a.clock.advance(1_000);
      await a.engram.update(id, 'meeting at 11');
      await a.engram.sync(enc());
      await b.engram.sync(enc());
      expect((await b.engram.get(id))?.memory).toBe('meeting at 11');
      server().replace(fixture.collection, restamped(old!, {}, 120_000));
      await b.engram.sync(enc());
      expect((await b.engram.get(id))?.memory).toBe('meeting at 11');
      expect((await b.engram.syncStatus()).refused.byReason.unauthenticated).toBe(1);
    });

    it('a forged tombstone cannot destroy an edit not yet pushed: the edit and its history stay', async () => {
      const { results } = await a.engram.add('draft plan', { userId: 'u' });
      const id = results[0]!.id;
      await a.engram.sync(enc());
      await b.engram.sync(enc());
      b.clock.advance(1_000);
      await b.engram.update(id, 'draft plan, revised offline');
      const [point] = memoryPoints();
      server().replace(fixture.collection, restamped(point!, { deleted: true }, 3_600_000));
      await b.engram.sync(enc());
      expect((await b.engram.get(id))?.memory).toBe('draft plan, revised offline');
      expect((await b.engram.history(id)).map((h) => h.memory)).toContain('draft plan, revised offline');
      expect((await b.engram.syncStatus()).refused.byReason.unauthenticated).toBe(1);
      // The server can still withhold: it keeps its forged point, whose stamp makes its
      // conditional upsert ignore the edit. a keeps what it had; nothing is lost anywhere.
      await a.engram.sync(enc());
      expect((await a.engram.get(id))?.memory).toBe('draft plan');
    });

    it('an authentic older version served again is refused as a rollback, and leaves no trace in history', async () => {
      const { results } = await a.engram.add('the code is 1234', { userId: 'u' });
      const id = results[0]!.id;
      await a.engram.sync(enc());
      const [old] = memoryPoints();
      a.clock.advance(1_000);
      await a.engram.update(id, 'the code is 5678');
      await a.engram.sync(enc());
      await b.engram.sync(enc());
      const before = await b.engram.history(id);
      server().replace(fixture.collection, old!); // as it was, seal and all: within the pull's look-back
      await b.engram.sync(enc());
      expect((await b.engram.get(id))?.memory).toBe('the code is 5678');
      expect(await b.engram.history(id)).toEqual(before);
      expect((await b.engram.syncStatus()).refused.byReason.rollback).toBe(1);
    });

    it('a deleted message served again as it was before is refused, not brought back (messages keep no tombstone row)', async () => {
      const withMessages = on(fixture, {
        encryption: { passphrase: PASSPHRASE },
        include: ['memories', 'blocks', 'messages'],
      });
      const chat = a.engram.conversation('t1');
      await chat.add([
        { role: 'user', content: 'my bank PIN is 4321' },
        { role: 'assistant', content: 'noted' },
      ]);
      await a.engram.sync(withMessages);
      await b.engram.sync(withMessages);
      const before = server()
        .points(fixture.collection)
        .filter((p) => p.payload['kind'] === 'message');
      a.clock.advance(1_000);
      await chat.delete(0);
      await a.engram.sync(withMessages);
      expect((await b.engram.sync(withMessages)).deleted).toBe(1);
      for (const p of before) server().replace(fixture.collection, p); // the live versions, seal and all
      await b.engram.sync(withMessages);
      expect((await b.engram.conversation('t1').getMessages()).map((m) => m.content)).toEqual(['noted']);
      expect((await b.engram.syncStatus()).refused.byReason.rollback).toBe(1);
    });

    it('a header with encryptVectors switched off by the server is refused; no device uploads plain vectors', async () => {
      await a.engram.add('the cat sleeps on the warm windowsill', { userId: 'u' });
      await a.engram.sync(enc({ encryptVectors: true }));
      const header = server()
        .points(fixture.collection)
        .find((p) => p.id === HEADER_POINT_ID)!;
      const encryption = header.payload['encryption'] as Record<string, unknown>;
      server().replace(fixture.collection, {
        ...header,
        payload: { ...header.payload, encryption: { ...encryption, encryptVectors: false } },
      });
      await b.engram.add('quarterly revenue grew by four percent', { userId: 'u' });
      for (const options of [enc({ encryptVectors: true }), enc()]) {
        const e = await b.engram.sync(options).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(SyncError);
        expect(e).toMatchObject({
          reason: 'incompatible',
          message: expect.stringMatching(/header was changed/) as unknown,
        });
      }
      await expect(a.engram.sync(enc({ encryptVectors: true }))).rejects.toMatchObject({ reason: 'incompatible' });
      for (const p of server().points(fixture.collection)) expect(p.vector).toEqual({});
    });

    it('a device that asks for sealed vectors refuses a collection that keeps them in clear', async () => {
      await a.engram.add('plain vectors here', { userId: 'u' });
      await a.engram.sync(enc());
      await b.engram.add('my vector must stay sealed', { userId: 'u' });
      const before = server().points(fixture.collection);
      await expect(b.engram.sync(enc({ encryptVectors: true }))).rejects.toMatchObject({
        reason: 'incompatible',
        message: expect.stringMatching(/encryptVectors/) as unknown,
      });
      expect(server().points(fixture.collection)).toEqual(before);
    });

    it('header KDF parameters out of range or a salt that is not base64 are typed SyncErrors, before any key is derived', async () => {
      await a.engram.sync(enc());
      const header = server()
        .points(fixture.collection)
        .find((p) => p.id === HEADER_POINT_ID)!;
      const encryption = header.payload['encryption'] as Record<string, unknown>;
      for (const change of [
        { iterations: 1e12 },
        { iterations: 0 },
        { iterations: -5 },
        { iterations: 1.5 },
        { salt: 'not base64!' },
      ]) {
        server().replace(fixture.collection, {
          ...header,
          payload: { ...header.payload, encryption: { ...encryption, ...change } },
        });
        const e = await b.engram.sync(enc()).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(SyncError);
        expect((e as SyncError).reason).toBe('incompatible');
      }
    });

    it('the point id of a sealed memory is a keyed hash: it does not decode to the memory id or its creation time', async () => {
      const { results } = await a.engram.add('Ana moved to Lisbon', { userId: 'u' });
      const id = results[0]!.id;
      await a.engram.sync(enc());
      const [point] = memoryPoints();
      expect(point!.id).not.toBe(idToUuid(id));
      expect(idFromUuid(point!.id)).not.toBe(id);
      expect(idFromUuid(point!.id).slice(0, 10)).not.toBe(id.slice(0, 10)); // the ULID's time part
      // Every device finds the same point, so the collection converges.
      await b.engram.sync(enc());
      expect((await b.engram.get(id))?.memory).toBe('Ana moved to Lisbon');
    });

    it('an encrypted collection made by an older engram (format 1) is refused with a typed error that says what to do', async () => {
      await a.engram.sync(enc());
      const header = server()
        .points(fixture.collection)
        .find((p) => p.id === HEADER_POINT_ID)!;
      server().replace(fixture.collection, { ...header, payload: { ...header.payload, format: 1 } });
      await expect(b.engram.sync(enc())).rejects.toMatchObject({
        reason: 'incompatible',
        message: expect.stringMatching(/older engram.*new collection/) as unknown,
      });
    });
  },
);
