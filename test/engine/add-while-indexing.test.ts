// add() while the vector index is busy (see add-while-indexing-cases.ts), over fake-indexeddb.
import { describe, it, vi } from 'vitest';
import { addDoesNotWaitForTheQueue, addWaitsPastMaxUnapplied } from './add-while-indexing-cases.js';

// Snapshots wait at a gate the cases set: a snapshot under way holds the index's queue.
vi.mock('../../lib/store/snapshot-chunks.js', async (importOriginal) =>
  (await import('./held-snapshots.js')).holdingSnapshots(await importOriginal()),
);

describe('add() while the index is busy', () => {
  it(
    'does not wait for a snapshot under way, and finds exact and near duplicates of writes the index has not applied, in their scope only',
    addDoesNotWaitForTheQueue,
  );
  it(
    "waits for the index once it lags this instance's writes by more than MAX_UNAPPLIED log entries",
    addWaitsPastMaxUnapplied,
  );
});
