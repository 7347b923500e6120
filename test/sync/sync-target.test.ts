import { afterEach, describe, expect, it } from 'vitest';
import { SyncError } from '../../lib/errors.js';
import { FIELD, HEADER_POINT_ID, type CollectionHeader, type SyncPoint } from '../../lib/sync/sync-target.js';
import { TARGET_KINDS, type TargetFixture } from './targets.js';

const DIM = 4;

function point(
  n: number,
  fields: { stamp: number; origin: string; pushSeq: number; kind?: string; vector?: number[] | null },
): SyncPoint {
  const id = `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  const p: SyncPoint = {
    id,
    payload: {
      [FIELD.kind]: fields.kind ?? 'memory',
      [FIELD.stamp]: fields.stamp,
      [FIELD.origin]: fields.origin,
      [FIELD.pushSeq]: fields.pushSeq,
      n,
    },
  };
  if (fields.vector !== null) p.vector = fields.vector ?? [1, 0, 0, 0];
  return p;
}

describe.each(TARGET_KINDS)('SyncTarget contract: $name', ({ make }) => {
  let fixture: TargetFixture | undefined;
  afterEach(async () => {
    if (fixture?.server !== undefined) expect(fixture.server.violations).toEqual([]);
    await fixture?.dispose();
    fixture = undefined;
  });

  async function ready(): Promise<TargetFixture> {
    fixture = await make();
    await fixture.target.ensureCollection(DIM);
    return fixture;
  }

  it('ensureCollection() creates once, then accepts the same size and refuses another one', async () => {
    fixture = await make();
    expect(await fixture.target.ensureCollection(DIM)).toEqual({ created: true });
    expect(await fixture.target.ensureCollection(DIM)).toEqual({ created: false });
    const e = await fixture.target.ensureCollection(DIM + 1).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SyncError);
    expect((e as SyncError).reason).toBe('incompatible');
  });

  it('writeHeader() is insert-only: the first header written holds', async () => {
    const { target } = await ready();
    expect(await target.readHeader()).toBeUndefined();
    const first: CollectionHeader = { format: 1, embedderId: 'hash-4', dimensions: DIM };
    expect(await target.writeHeader(first)).toEqual(first);
    expect(await target.writeHeader({ format: 1, embedderId: 'other', dimensions: DIM })).toEqual(first);
    expect(await target.readHeader()).toEqual(first);
    expect(await target.count()).toBe(0);
  });

  it('upsert() replaces a point only with a larger stamp, or the same stamp from the same origin', async () => {
    const { target } = await ready();
    await target.upsert([point(1, { stamp: 100, origin: 'a', pushSeq: 1 })]);
    await target.upsert([point(1, { stamp: 90, origin: 'b', pushSeq: 1 })]); // older: ignored
    expect((await target.retrieve([point(1, { stamp: 0, origin: '', pushSeq: 0 }).id]))[0]!.payload[FIELD.origin]).toBe(
      'a',
    );
    await target.upsert([point(1, { stamp: 100, origin: 'b', pushSeq: 2 })]); // same stamp, other origin: ignored
    expect(
      (await target.retrieve([point(1, { stamp: 0, origin: '', pushSeq: 0 }).id]))[0]!.payload[FIELD.pushSeq],
    ).toBe(1);
    await target.upsert([point(1, { stamp: 100, origin: 'a', pushSeq: 3 })]); // a retry by its origin
    expect(
      (await target.retrieve([point(1, { stamp: 0, origin: '', pushSeq: 0 }).id]))[0]!.payload[FIELD.pushSeq],
    ).toBe(3);
    await target.upsert([point(1, { stamp: 101, origin: 'b', pushSeq: 4 })]); // newer: wins
    const [stored] = await target.retrieve([point(1, { stamp: 0, origin: '', pushSeq: 0 }).id]);
    expect(stored!.payload[FIELD.origin]).toBe('b');
    expect(stored!.vector).toHaveLength(DIM);
  });

  it('upsert() stores points without a vector (tombstones, blocks)', async () => {
    const { target } = await ready();
    await target.upsert([point(2, { stamp: 5, origin: 'a', pushSeq: 1, kind: 'block', vector: null })]);
    const [stored] = await target.retrieve([point(2, { stamp: 0, origin: '', pushSeq: 0 }).id]);
    expect(stored!.vector).toBeUndefined();
    expect(stored!.payload[FIELD.kind]).toBe('block');
  });

  it('scrollSince() pages by push counter per origin and misses nothing', async () => {
    const { target } = await ready();
    const points: SyncPoint[] = [];
    for (let i = 0; i < 25; i++)
      points.push(point(10 + i, { stamp: 1000 + i, origin: i % 2 === 0 ? 'a' : 'b', pushSeq: Math.floor(i / 2) + 1 }));
    await target.upsert(points);
    const seen = new Set<string>();
    const cursors: Record<string, number> = {};
    for (let page = 0; page < 20; page++) {
      const got = await target.scrollSince(cursors, ['memory'], 4);
      const seqs = got.map((p) => Number(p.payload[FIELD.pushSeq]));
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      for (const p of got) {
        expect(seen.has(p.id)).toBe(false);
        seen.add(p.id);
        const origin = p.payload[FIELD.origin] as string;
        cursors[origin] = Math.max(cursors[origin] ?? 0, Number(p.payload[FIELD.pushSeq]));
      }
      if (got.length < 4) break;
    }
    expect(seen.size).toBe(25);
    // A point pushed later by a known origin shows up after its cursor; other kinds stay out.
    await target.upsert([
      point(99, { stamp: 5000, origin: 'a', pushSeq: 50 }),
      point(98, { stamp: 5000, origin: 'a', pushSeq: 51, kind: 'message', vector: null }),
    ]);
    const later = await target.scrollSince(cursors, ['memory', 'block'], 10);
    expect(later.map((p) => p.payload['n'])).toEqual([99]);
    expect((await target.scrollSince(cursors, ['message'], 10)).map((p) => p.payload['n'])).toEqual([98]);
  });

  it('delete() removes points and ignores absent ones; count() leaves out the header', async () => {
    const { target } = await ready();
    await target.writeHeader({ format: 1, embedderId: 'e', dimensions: DIM });
    await target.upsert([
      point(1, { stamp: 1, origin: 'a', pushSeq: 1 }),
      point(2, { stamp: 1, origin: 'a', pushSeq: 2 }),
    ]);
    expect(await target.count()).toBe(2);
    await target.delete([
      point(1, { stamp: 0, origin: '', pushSeq: 0 }).id,
      point(77, { stamp: 0, origin: '', pushSeq: 0 }).id,
    ]);
    expect(await target.count()).toBe(1);
    expect((await target.retrieve([HEADER_POINT_ID])).length).toBe(1);
  });

  it('upsert() refuses a vector of the wrong size with a SyncError', async () => {
    const { target } = await ready();
    const e = await target
      .upsert([point(3, { stamp: 1, origin: 'a', pushSeq: 1, vector: [1, 0] })])
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SyncError);
    expect((e as SyncError).reason).toBe('rejected');
  });
});
