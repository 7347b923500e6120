// End-to-end encryption through engram.sync(): what the server holds, two devices
// with one passphrase, a wrong passphrase that changes nothing, encryptVectors.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncError } from '../../lib/errors.js';
import { type TargetFixture } from './targets.js';
import { device, httpTarget, on, unsealedWire, type Device } from './sync-helpers.js';

const PASSPHRASE = 'correct horse battery staple';

describe('engram.sync() with encryption', () => {
  let fixture: TargetFixture;
  let a: Device;
  let b: Device;
  beforeEach(async () => {
    fixture = await httpTarget();
    a = await device();
    b = await device();
  });
  afterEach(async () => {
    await a.engram.close();
    await b.engram.close();
    if (fixture.server !== undefined) expect(fixture.server.violations).toEqual([]);
    await fixture.dispose();
  });

  it('the server never holds text, scope, metadata or block values in plain text', async () => {
    await a.engram.add('Ana takes lithium for her bipolar disorder', {
      userId: 'ana-private',
      metadata: { topic: 'health-secret' },
    });
    await a.engram.blocks('helper').set('human', 'Name: Ana Quaresma');
    await a.engram.conversation('t1').add({ role: 'user', content: 'my bank PIN is 4321' });
    await a.engram.sync(
      on(fixture, { encryption: { passphrase: PASSPHRASE }, include: ['memories', 'blocks', 'messages'] }),
    );
    await b.engram.sync(
      on(fixture, { encryption: { passphrase: PASSPHRASE }, include: ['memories', 'blocks', 'messages'] }),
    );
    expect((await b.engram.getAll({ userId: 'ana-private' })).results[0]?.memory).toBe(
      'Ana takes lithium for her bipolar disorder',
    );
    expect((await b.engram.blocks('helper').get('human'))?.value).toBe('Name: Ana Quaresma');
    expect((await b.engram.conversation('t1').getMessages())[0]?.content).toBe('my bank PIN is 4321');
    if (fixture.server !== undefined) {
      const stored = unsealedWire(fixture.server.points(fixture.collection).map((p) => p.payload));
      for (const secret of [
        'lithium',
        'bipolar',
        'ana-private',
        'health-secret',
        'Quaresma',
        'helper',
        'PIN',
        '4321',
        'long_term',
      ]) {
        expect(stored).not.toContain(secret);
      }
      expect(stored).toContain('"sealed":"<ciphertext>"');
    }
  });

  it('a wrong passphrase is a clear SyncError and changes nothing, here or on the server', async () => {
    await a.engram.add('private note', { userId: 'u' });
    await a.engram.sync(on(fixture, { encryption: { passphrase: PASSPHRASE } }));
    await b.engram.add('b has its own note', { userId: 'u' });
    const before = fixture.server?.points(fixture.collection);
    const e = await b.engram
      .sync(on(fixture, { encryption: { passphrase: 'not the passphrase' } }))
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SyncError);
    expect((e as SyncError).reason).toBe('wrong-passphrase');
    expect((e as SyncError).message).toMatch(/wrong passphrase/);
    expect((await b.engram.getAll({ userId: 'u' })).results.map((m) => m.memory)).toEqual(['b has its own note']);
    if (fixture.server !== undefined) expect(fixture.server.points(fixture.collection)).toEqual(before);
    expect(Object.keys((await b.engram.syncStatus()).cursors)).toEqual([]);
    // Without any passphrase the collection is refused too; with the right one it syncs.
    await expect(b.engram.sync(on(fixture))).rejects.toMatchObject({ reason: 'wrong-passphrase' });
    expect((await b.engram.sync(on(fixture, { encryption: { passphrase: PASSPHRASE } }))).downloaded).toBe(1);
  });

  it('a plain collection refuses encryption rather than mixing the two', async () => {
    await a.engram.add('plain', { userId: 'u' });
    await a.engram.sync(on(fixture));
    await expect(b.engram.sync(on(fixture, { encryption: { passphrase: PASSPHRASE } }))).rejects.toMatchObject({
      reason: 'incompatible',
    });
  });

  it('encryptVectors: the server holds no vectors; the other device still searches', async () => {
    await a.engram.add('the cat sleeps on the warm windowsill', { userId: 'u' });
    await a.engram.add('quarterly revenue grew by four percent', { userId: 'u' });
    const options = on(fixture, { encryption: { passphrase: PASSPHRASE, encryptVectors: true } });
    await a.engram.sync(options);
    await b.engram.sync(options);
    if (fixture.server !== undefined) {
      for (const p of fixture.server.points(fixture.collection)) expect(p.vector).toEqual({});
    }
    const hits = await b.engram.search('cat windowsill', { userId: 'u', limit: 1 });
    expect(hits.results[0]?.memory).toBe('the cat sleeps on the warm windowsill');
  });
});
