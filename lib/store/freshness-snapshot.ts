/**
 * The freshness ledger's snapshot (row-freshness.ts): every row's version, sealed whole with
 * WebCrypto like the index snapshots (snapshot-chunks.ts), so an open reads it and only the
 * journal written after it, not every row. Loaded when an encrypted store opens, saved when it
 * closes and in the background once the journal is long; the journal it holds is then dropped.
 */
import { FRESHNESS_HEAD, FRESHNESS_SNAPSHOT } from './row-freshness.js';
import type { EngramDb } from './schema.js';
import { getSnapshot, putSnapshot, snapshotPositionKey } from './snapshot-chunks.js';

/** Saves running one at a time per store. */
const saving = new WeakMap<EngramDb, Promise<void>>();

/**
 * Loads the ledger of the encrypted store `db` (nothing for a plain one): its snapshot and the
 * journal after it; when they do not check (missing, changed, a gap), every row's stored version
 * up to the head, and the damage is reported (`meta`, `fresh/head`). Run once the store is open,
 * before anything else reads it.
 */
export async function loadFreshness(db: EngramDb): Promise<void> {
  const { sealing } = db;
  if (sealing === undefined) return;
  const { journal } = sealing;
  // A save by another instance between reading the snapshot and the journal leaves a gap: read both again once.
  let damage: string | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    const snapshot = (await getSnapshot(db, FRESHNESS_SNAPSHOT))?.value;
    damage = await journal.load(snapshot, (trans) => sealing.scan!(trans));
    if (damage === undefined) break;
  }
  if (damage !== undefined) sealing.onDamaged({ table: 'meta', key: FRESHNESS_HEAD, reason: damage });
  journal.onLong = () => {
    saveFreshness(db).catch(() => undefined); // a failed save only means a longer journal
  };
  journal.onStale = () => {
    loadFreshness(db).catch(() => undefined); // until it loads, newer rows are taken as they are
  };
}

/**
 * Saves the ledger of `db` into its snapshot and drops the journal it holds. Nothing when the
 * ledger is not loaded, is stale, or an equal or newer snapshot is stored (another instance's).
 */
export function saveFreshness(db: EngramDb): Promise<void> {
  const running = saving.get(db);
  if (running !== undefined) return running;
  const run = save(db).finally(() => saving.delete(db));
  saving.set(db, run);
  return run;
}

async function save(db: EngramDb): Promise<void> {
  const { sealing } = db;
  if (sealing === undefined) return;
  const { journal } = sealing;
  const { ledger } = journal;
  if (!ledger.loaded || ledger.stale || ledger.head === ledger.savedAt) return;
  const record = ledger.toRecord();
  const stored = (await db.meta.get(snapshotPositionKey(FRESHNESS_SNAPSHOT)))?.value;
  if (typeof stored === 'number' && stored >= record.n) return;
  await putSnapshot(db, FRESHNESS_SNAPSHOT, { bytes: new Uint8Array(0), seq: record.n, ...record });
  ledger.savedAt = Math.max(ledger.savedAt, record.n);
  await journal.drop(record.n);
}
