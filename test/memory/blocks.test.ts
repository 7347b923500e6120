import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engram, LimitExceededError, NotFoundError, ValidationError } from '../../lib/index.js';
import { openTemp } from '../helpers.js';
import { openV1Store } from '../store/old-schemas.js';

let engram: Engram;
beforeEach(async () => {
  engram = await openTemp();
});
afterEach(async () => {
  await engram.close();
});

describe('Blocks', () => {
  it('set() / get() / list() store labelled blocks per agent', async () => {
    const core = engram.blocks('agent-1');
    await core.set('persona', 'I am Sam.');
    await core.set('human', 'Name: Ana', { limit: 100 });
    await engram.blocks('agent-2').set('persona', 'Other agent');
    expect(await core.get('persona')).toMatchObject({ value: 'I am Sam.', limit: 2000, version: 1 });
    expect((await core.list()).map((b) => b.label)).toEqual(['human', 'persona']);
    expect(await core.get('missing')).toBeUndefined();
    const again = await core.set('persona', 'I am Sam, v2.');
    expect(again.version).toBe(2);
    expect(again.limit).toBe(2000);
  });

  it('append() adds a line and replace() swaps text', async () => {
    const core = engram.blocks('a');
    await core.append('human', 'Likes tea.');
    await core.append('human', 'Lives in Oslo.');
    expect((await core.get('human'))!.value).toBe('Likes tea.\nLives in Oslo.');
    await core.replace('human', 'Oslo', 'Bergen');
    expect((await core.get('human'))!.value).toBe('Likes tea.\nLives in Bergen.');
    await expect(core.replace('human', 'Paris', 'Rome')).rejects.toThrow(ValidationError);
    await expect(core.replace('nope', 'a', 'b')).rejects.toThrow(NotFoundError);
  });

  it('a write past the limit is rejected and the block is unchanged', async () => {
    const core = engram.blocks('a');
    await core.set('human', '12345', { limit: 10 });
    await expect(core.append('human', 'abcdefgh')).rejects.toThrow(LimitExceededError);
    await expect(core.set('human', 'x'.repeat(11))).rejects.toThrow(LimitExceededError);
    await expect(core.replace('human', '12345', 'x'.repeat(11))).rejects.toThrow(LimitExceededError);
    expect(await core.get('human')).toMatchObject({ value: '12345', version: 1, limit: 10 });
  });

  it('set() validates its arguments', async () => {
    const core = engram.blocks('a');
    await expect(core.set('', 'x')).rejects.toThrow(/label/);
    await expect(core.set('l', 5 as unknown as string)).rejects.toThrow(/value/);
    await expect(core.set('l', 'x', { limit: 0 })).rejects.toThrow(/options.limit/);
    expect(() => engram.blocks('')).toThrow(ValidationError);
  });
});

describe('Blocks of a user', () => {
  it("blocks(agentId, { userId }) keeps each user's blocks apart and shows shared ones only when asked", async () => {
    await engram.blocks('helper').set('persona', 'Patient and brief.', { shared: true });
    await engram.blocks('helper').set('notes', 'The agent alone reads this.');
    const ana = engram.blocks('helper', { userId: 'ana' });
    const ben = engram.blocks('helper', { userId: 'ben' });
    await ana.set('human', 'Name: Ana');
    await ben.append('human', 'Name: Ben');
    expect((await ana.get('human'))!.value).toBe('Name: Ana');
    expect((await ben.get('human'))!.value).toBe('Name: Ben');
    expect(await ana.get('notes')).toBeUndefined();
    expect(await engram.blocks('helper').get('human')).toBeUndefined();
    expect((await ana.list()).map((b) => [b.label, b.userId ?? null, b.shared])).toEqual([
      ['human', 'ana', false],
      ['persona', null, true],
    ]);
    // A user's edit of a shared block becomes that user's own copy; the shared one is unchanged.
    const edited = await ben.replace('persona', 'brief', 'thorough');
    expect(edited).toMatchObject({ value: 'Patient and thorough.', userId: 'ben', shared: false });
    expect((await ana.get('persona'))!.value).toBe('Patient and brief.');
    expect((await engram.blocks('helper').get('persona'))!.value).toBe('Patient and brief.');
    // shared: false stops sharing the agent's block.
    await ana.set('persona', 'Quiet.', { shared: false });
    expect(await ana.get('persona')).toBeUndefined();
    expect(await engram.blocks('helper').get('persona')).toMatchObject({ value: 'Quiet.', shared: false });
    expect(() => engram.blocks('helper', { userId: '' })).toThrow(ValidationError);
    expect(() => engram.blocks('helper', { user: 'ana' } as never)).toThrow(ValidationError);
    await expect(ana.set('x', 'y', { shared: 'yes' as never })).rejects.toThrow(ValidationError);
  });

  it('open() upgrades a version 1 store: blocks keyed by agent stay, as the agent’s own', async () => {
    const name = `blocks-v1-${Math.random().toString(36).slice(2)}`;
    const old = await openV1Store(name);
    await old.table('blocks').bulkPut([
      { agentId: 'helper', label: 'persona', value: 'Old persona', limit: 100, version: 3, updatedAt: 1 },
      { agentId: 'other', label: 'human', value: 'Old human', limit: 2000, version: 1, updatedAt: 2 },
    ]);
    old.close();
    const upgraded = await Engram.open({ name });
    expect(await upgraded.blocks('helper').get('persona')).toMatchObject({
      value: 'Old persona',
      limit: 100,
      version: 3,
      shared: false,
    });
    expect((await upgraded.blocks('other').list()).map((b) => b.value)).toEqual(['Old human']);
    expect(await upgraded.blocks('helper', { userId: 'ana' }).get('persona')).toBeUndefined();
    await upgraded.blocks('helper').append('persona', 'and new');
    expect((await upgraded.blocks('helper').get('persona'))!.value).toBe('Old persona\nand new');
    await upgraded.close();
  });
});
