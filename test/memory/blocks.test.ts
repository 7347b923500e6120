import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LimitExceededError, NotFoundError, ValidationError, type Engram } from '../../lib/index.js';
import { openTemp } from '../helpers.js';

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
