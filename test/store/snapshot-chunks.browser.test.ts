// In Chromium one IndexedDB value of ~128 MB or more is never committed (the put hangs without an error):
// a 200 MB snapshot (about what HNSW holds for 100k 384-d vectors) goes through in chunks.
import { describe, expect, it } from 'vitest';
import { openStore } from '../../lib/engine/open-store.js';
import { getSnapshot, putSnapshot, SNAPSHOT_CHUNK_BYTES } from '../../lib/store/snapshot-chunks.js';

describe('snapshot chunks in Chromium', () => {
  it('stores and reads back a 200 MB snapshot', async () => {
    const name = `chunks-browser-${Date.now()}`;
    const { db } = await openStore(name);
    const bytes = new Uint8Array(200 * 2 ** 20);
    for (let i = 0; i < bytes.length; i += 4093) bytes[i] = (i >>> 12) & 255;
    await putSnapshot(db, 'indexSnapshot', { bytes, seq: 7 });
    const keys = (await db.meta.toCollection().primaryKeys()).filter((k) => k.startsWith('indexSnapshot:'));
    // The chunks, and the log position kept beside them for compaction.
    expect(keys.length).toBe(Math.ceil(bytes.length / SNAPSHOT_CHUNK_BYTES) + 1);
    expect((await db.meta.get('indexSnapshot:seq'))?.value).toBe(7);
    const back = (await getSnapshot(db, 'indexSnapshot'))!.value as { bytes: Uint8Array; seq: number };
    expect(back.seq).toBe(7);
    expect(back.bytes.length).toBe(bytes.length);
    for (let i = 0; i < bytes.length; i += 4093) if (back.bytes[i] !== bytes[i]) expect.fail(`byte ${i} differs`);
    db.close();
    indexedDB.deleteDatabase(name);
  }, 60_000);
});
