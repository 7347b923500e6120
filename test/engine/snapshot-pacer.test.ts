import { describe, expect, it, vi } from 'vitest';
import { IDLE_MS, SnapshotPacer } from '../../lib/engine/snapshot-pacer.js';

/** A store whose writing and busy minimum the test sets. */
function fakeCore(writing = false, busyMin = 5000) {
  return { writing, busySnapshotMin: () => busyMin };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('SnapshotPacer', () => {
  it('snapshots at once when max(1000, a tenth of the size) changes are out and nothing writes', async () => {
    const pacer = new SnapshotPacer(fakeCore());
    const snapshot = vi.fn(async () => undefined);
    const recheck = vi.fn(async () => undefined);
    await pacer.pace({ size: 100, unsnapshotted: 999 }, snapshot, recheck);
    await pacer.pace({ size: 20_000, unsnapshotted: 1999 }, snapshot, recheck);
    expect(snapshot).not.toHaveBeenCalled();
    await pacer.pace({ size: 100, unsnapshotted: 1000 }, snapshot, recheck);
    await pacer.pace({ size: 20_000, unsnapshotted: 2000 }, snapshot, recheck);
    await pacer.pace({ size: 20_000, unsnapshotted: Infinity }, snapshot, recheck);
    expect(snapshot).toHaveBeenCalledTimes(3);
    await sleep(IDLE_MS + 20);
    expect(recheck).not.toHaveBeenCalled();
  });

  it('a dropped snapshot is due however few changes followed it', async () => {
    const pacer = new SnapshotPacer(fakeCore());
    const snapshot = vi.fn(async () => undefined);
    await pacer.pace({ size: 50_000, unsnapshotted: 1, dropped: true }, snapshot, async () => undefined);
    expect(snapshot).toHaveBeenCalledTimes(1);
  });

  it('while the instance writes, a small or dropped snapshot waits for the pause, from one timer', async () => {
    const core = fakeCore(true, 5000);
    const pacer = new SnapshotPacer(core);
    const snapshot = vi.fn(async () => undefined);
    const recheck = vi.fn(async () => undefined);
    const asked = performance.now();
    await pacer.pace({ size: 100, unsnapshotted: 4999 }, snapshot, recheck);
    await pacer.pace({ size: 100, unsnapshotted: 1, dropped: true }, snapshot, recheck);
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
    await pacer.pace({ size: 100, unsnapshotted: 5000 }, snapshot, recheck);
    expect(snapshot).toHaveBeenCalledTimes(1);
  });

  it('a write of this instance applied within IDLE_MS counts as writing', async () => {
    const pacer = new SnapshotPacer(fakeCore(false));
    const snapshot = vi.fn(async () => undefined);
    const recheck = vi.fn(async () => undefined);
    pacer.ownApplied();
    await pacer.pace({ size: 100, unsnapshotted: 1000 }, snapshot, recheck);
    expect(snapshot).not.toHaveBeenCalled();
    await vi.waitFor(
      () => {
        expect(recheck).toHaveBeenCalledTimes(1);
      },
      { timeout: 2000, interval: 5 },
    );
    await pacer.pace({ size: 100, unsnapshotted: 1000 }, snapshot, recheck);
    expect(snapshot).toHaveBeenCalledTimes(1);
  });

  it('the next snapshot follows the last after ten times its duration', async () => {
    const pacer = new SnapshotPacer(fakeCore());
    const snapshot = vi.fn(async () => undefined);
    const recheck = vi.fn(async () => undefined);
    const ended = performance.now();
    pacer.ended(ended - 20); // a 20 ms snapshot: the next after 200 ms
    await pacer.pace({ size: 100, unsnapshotted: 1000 }, snapshot, recheck);
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
    const pacer = new SnapshotPacer(fakeCore(true));
    const recheck = vi.fn(async () => undefined);
    await pacer.pace({ size: 100, unsnapshotted: 1000 }, async () => undefined, recheck);
    pacer.stop();
    await sleep(IDLE_MS * 3);
    expect(recheck).not.toHaveBeenCalled();
  });
});
