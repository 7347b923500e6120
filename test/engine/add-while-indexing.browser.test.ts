// add() while the vector index is busy (see add-while-indexing-cases.ts), over real IndexedDB in Chromium.
import { describe, it, vi } from 'vitest';
import { addDoesNotWaitForTheQueue, addWaitsPastMaxUnapplied } from './add-while-indexing-cases.js';

// Snapshots wait for this gate while it is set: a snapshot under way holds the index's queue.
const held = vi.hoisted(() => ({ gate: undefined as Promise<void> | undefined }));
vi.mock('../../lib/store/snapshot-chunks.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/store/snapshot-chunks.js')>();
  return {
    ...real,
    putSnapshot: async (...args: Parameters<typeof real.putSnapshot>): Promise<void> => {
      await held.gate;
      await real.putSnapshot(...args);
    },
  };
});

describe('add() in Chromium while the index is busy', () => {
  it('does not wait for a snapshot under way, and finds exact and near duplicates of writes the index has not applied, in their scope only', () => addDoesNotWaitForTheQueue(held));
  it('waits for the index once it lags this instance\'s writes by more than MAX_UNAPPLIED log entries', () => addWaitsPastMaxUnapplied(held));
});
