import { describe, expect, it, vi } from 'vitest';
import { IDLE_MS, SnapshotPacer } from '../../lib/engine/snapshot-pacer.js';

/**
 * A pacer over a store whose writing and busy minimum the test sets, and a cache whose
 * snapshot() and maybeSnapshot() (`recheck`) only count their calls.
 */
function paced(writing = false, busyMin = 5000) {
  const snapshot = vi.fn(async () => undefined);
  const recheck = vi.fn(async () => undefined);
  const pacer = new SnapshotPacer({ writing, busySnapshotMin: () => busyMin }, { snapshot, maybeSnapshot: recheck });
  return { pacer, snapshot, recheck };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('SnapshotPacer', () => {
  it('snapshots at once when max(1000, a tenth of the size) changes are out and nothing writes', async () => {
    const { pacer, snapshot, recheck } = paced();
    await pacer.pace({ size: 100, unsnapshotted: 999 });
    await pacer.pace({ size: 20_000, unsnapshotted: 1999 });
    expect(snapshot).not.toHaveBeenCalled();
    await pacer.pace({ size: 100, unsnapshotted: 1000 });
    await pacer.pace({ size: 20_000, unsnapshotted: 2000 });
    await pacer.pace({ size: 20_000, unsnapshotted: Infinity });
    expect(snapshot).toHaveBeenCalledTimes(3);
    await sleep(IDLE_MS + 20);
    expect(recheck).not.toHaveBeenCalled();
  });

  it('a dropped snapshot is due however few changes followed it', async () => {
    const { pacer, snapshot } = paced();
    await pacer.pace({ size: 50_000, unsnapshotted: 1, dropped: true });
    expect(snapshot).toHaveBeenCalledTimes(1);
  });

  it('while the instance writes, a small or dropped snapshot waits for the pause, from one timer', async () => {
    const { pacer, snapshot, recheck } = paced(true, 5000);
    const asked = performance.now();
    await pacer.pace({ size: 100, unsnapshotted: 4999 });
    await pacer.pace({ size: 100, unsnapshotted: 1, dropped: true });
    expect(snapshot).not.toHaveBeenCalled();
    await vi.waitFor(
      () => {
        expect(recheck).toHaveBeenCalledTimes(1);
      },
      { timeout: 2000, interval: 5 },
    );
    // setTimeout may fire up to a millisecond early.
    expect(performance.now() - asked).toBeGreaterThanOrEqual(IDLE_MS - 1);
    await sleep(IDLE_MS + 20);
    expect(recheck).toHaveBeenCalledTimes(1);
    // A snapshot of at least the busy minimum does not wait for the pause.
    await pacer.pace({ size: 100, unsnapshotted: 5000 });
    expect(snapshot).toHaveBeenCalledTimes(1);
  });

  it('a write of this instance applied within IDLE_MS counts as writing', async () => {
    const { pacer, snapshot, recheck } = paced(false);
    pacer.ownApplied();
    await pacer.pace({ size: 100, unsnapshotted: 1000 });
    expect(snapshot).not.toHaveBeenCalled();
    await vi.waitFor(
      () => {
        expect(recheck).toHaveBeenCalledTimes(1);
      },
      { timeout: 2000, interval: 5 },
    );
    await pacer.pace({ size: 100, unsnapshotted: 1000 });
    expect(snapshot).toHaveBeenCalledTimes(1);
  });

  it('the next snapshot follows the last after ten times its duration', async () => {
    const { pacer, snapshot, recheck } = paced();
    const ended = performance.now();
    pacer.ended(ended - 20); // a 20 ms snapshot: the next after 200 ms
    await pacer.pace({ size: 100, unsnapshotted: 1000 });
    expect(snapshot).not.toHaveBeenCalled();
    await vi.waitFor(
      () => {
        expect(recheck).toHaveBeenCalledTimes(1);
      },
      { timeout: 3000, interval: 5 },
    );
    expect(performance.now() - ended).toBeGreaterThanOrEqual(199);
  });

  it('stop() cancels a held-back snapshot', async () => {
    const { pacer, recheck } = paced(true);
    await pacer.pace({ size: 100, unsnapshotted: 1000 });
    pacer.stop();
    await sleep(IDLE_MS * 3);
    expect(recheck).not.toHaveBeenCalled();
  });
});
