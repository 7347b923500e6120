// Ordering properties of sync on the in-memory twin (fast, no network): versions
// pushed late, blocks edited on two devices, requests that follow the changes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryTarget } from '../../lib/sync/memory-target.js';
import type { SyncOptions } from '../../lib/sync/sync-options.js';
import { device, FAST, type Device } from './sync-helpers.js';

describe('engram.sync({ target }) ordering', () => {
  let target: MemoryTarget;
  let devices: Device[];
  const on = (): SyncOptions => ({ target, ...FAST });
  beforeEach(async () => {
    target = new MemoryTarget();
    devices = [await device(), await device(), await device()];
  });
  afterEach(async () => {
    for (const d of devices) await d.engram.close();
  });

  it('a memory written offline earlier and pushed later still reaches a device that pulled newer ones', async () => {
    const [a, b, c] = devices as [Device, Device, Device];
    const { results: early } = await a.engram.add('written offline on the train', { userId: 'u' }); // t0
    b.clock.advance(60_000);
    const { results: late } = await b.engram.add('written a minute later at home', { userId: 'u' });
    await b.engram.sync(on());
    await c.engram.sync(on()); // c's cursor is now past a minute later
    await a.engram.sync(on()); // a comes online and pushes its older memory
    expect((await c.engram.sync(on())).downloaded).toBe(1);
    expect((await c.engram.get(early[0]!.id))?.memory).toBe('written offline on the train');
    expect((await c.engram.get(late[0]!.id))?.memory).toBe('written a minute later at home');
  });

  it('after reset() a device keeps counting its pushes from where the server has them, so others still pull it', async () => {
    const [a, b] = devices as [Device, Device, Device];
    // More than the pull lookback (256), so a restarted counter would hide the new push.
    await a.engram.add(
      Array.from({ length: 300 }, (_, i) => ({ role: 'user' as const, content: `old ${i}` })),
      { userId: 'u', infer: false },
    );
    await a.engram.sync(on());
    await b.engram.sync(on());
    await a.engram.reset();
    const { results } = await a.engram.add('written after the reset', { userId: 'u' });
    expect((await a.engram.sync(on())).uploaded).toBe(1);
    expect((await b.engram.sync(on())).downloaded).toBe(1);
    expect((await b.engram.get(results[0]!.id))?.memory).toBe('written after the reset');
  });

  it('a core block edited on two devices converges on the later edit', async () => {
    const [a, b] = devices as [Device, Device, Device];
    await a.engram.blocks('helper').set('human', 'Name: Ana');
    await a.engram.sync(on());
    await b.engram.sync(on());
    a.clock.advance(1_000);
    await a.engram.blocks('helper').set('human', 'Name: Ana. Likes jazz');
    b.clock.advance(2_000);
    await b.engram.blocks('helper').set('human', 'Name: Ana. Lives in Lisbon');
    await a.engram.sync(on());
    expect((await b.engram.sync(on())).conflicts).toBe(1);
    await a.engram.sync(on());
    for (const d of [a, b])
      expect((await d.engram.blocks('helper').get('human'))?.value).toBe('Name: Ana. Lives in Lisbon');
    // Nothing more to do on either side: a pulled block is not echoed back.
    expect(await a.engram.sync(on())).toEqual({ uploaded: 0, downloaded: 0, deleted: 0, conflicts: 0 });
    expect(await b.engram.sync(on())).toEqual({ uploaded: 0, downloaded: 0, deleted: 0, conflicts: 0 });
  });

  it('an incremental sync sends one upsert per batch of changes, whatever the store size', async () => {
    const [a] = devices as [Device, Device, Device];
    await a.engram.add(
      Array.from({ length: 300 }, (_, i) => ({ role: 'user' as const, content: `memory ${i}` })),
      { userId: 'u', infer: false },
    );
    await a.engram.sync({ ...on(), batchSize: 100 });
    expect(target.calls.get('upsert')).toBe(3);
    target.calls.clear();
    const { results } = await a.engram.getAll({ userId: 'u', limit: 5 });
    for (const m of results) await a.engram.update(m.id, `${m.memory}, edited`);
    expect((await a.engram.sync({ ...on(), batchSize: 100 })).uploaded).toBe(5);
    expect(target.calls.get('upsert')).toBe(1);
    expect(target.calls.get('scroll')).toBe(2); // this device's push counter on the server, then one page of changes
    expect(await target.count()).toBe(300);
  });
});
