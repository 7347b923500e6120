/**
 * A gate snapshots wait at (a snapshot under way holds the vector index's
 * queue), for tests that mock lib/store/snapshot-chunks.js with
 * {@link holdingSnapshots}:
 * vi.mock('../../lib/store/snapshot-chunks.js', async (importOriginal) => (await import('./held-snapshots.js')).holdingSnapshots(await importOriginal()));
 * It imports nothing from lib, so the mock factory can load it first.
 */

/** While `gate` is set, every putSnapshot waits for it. */
export const held: { gate: Promise<void> | undefined } = { gate: undefined };

/** The snapshot-chunks module with putSnapshot waiting at the gate first. */
export function holdingSnapshots<M extends { putSnapshot: (...args: never[]) => Promise<void> }>(real: M): M {
  return {
    ...real,
    putSnapshot: async (...args: Parameters<M['putSnapshot']>): Promise<void> => {
      await held.gate;
      await real.putSnapshot(...args);
    },
  };
}
