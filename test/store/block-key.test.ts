import { Dexie } from 'dexie';
import { describe, expect, it } from 'vitest';
import { AgentTools, Engram } from '../../lib/index.js';
import { blockKey } from '../../lib/store/block-key.js';
import { BLOCKS_TABLE, EngramDb } from '../../lib/store/schema.js';
import type { BlockRow, ChangeRow, HistoryRow } from '../../lib/store/rows.js';
import { openTemp } from '../helpers.js';
import { openV1Store, V3_STORES } from './old-schemas.js';

/** Owners and labels built to meet in the `agentId/label` form or in its JSON neighbours. */
const TRICKY: [string, string, string | undefined][] = [
  ['team', 'reviewer/persona', undefined],
  ['team/reviewer', 'persona', undefined],
  ['team/reviewer/persona', 'x', undefined],
  ['team', 'reviewer', undefined],
  ['team', 'reviewer/persona', 'ana'],
  ['team/reviewer', 'persona', 'ana'],
  ['["team"', 'x"]', undefined],
  ['["team","x', 'y","ana"]', undefined],
  ['team', 'x/y', 'ana'],
  ['team', 'x', 'y/ana'],
  ['[', ']', undefined],
  ['a', '', undefined],
  ['a/', '', undefined],
];

describe('blockKey()', () => {
  it('blockKey() gives distinct owners and labels distinct keys, whatever they hold', () => {
    const keys = TRICKY.map(([a, l, u]) => blockKey(a, l, u));
    expect(new Set(keys).size).toBe(TRICKY.length);
  });

  it('blockKey() keeps the plain agentId/label of an agent’s own block that reads back one way', () => {
    expect(blockKey('helper', 'human', undefined)).toBe('helper/human');
    expect(blockKey('team', 'reviewer/persona', undefined)).toBe('["team","reviewer/persona"]');
    expect(blockKey('helper', 'human', 'ana')).toBe('["helper","human","ana"]');
  });
});

describe('core memory blocks with / in ids and labels', () => {
  it('core_memory_replace by agent "team" on label "reviewer/persona" leaves agent "team/reviewer"’s persona alone', async () => {
    const engram = await openTemp();
    try {
      await engram.blocks('team/reviewer').set('persona', 'I review code carefully.');
      const team = new AgentTools(engram, { agentId: 'team' });
      expect(
        await team.call(
          'core_memory_replace',
          JSON.stringify({ label: 'reviewer/persona', old_content: 'carefully', new_content: 'never' }),
        ),
      ).toMatch(/not found|no block/i);
      await team.call('core_memory_append', JSON.stringify({ label: 'reviewer/persona', content: 'I am the team.' }));
      expect((await engram.blocks('team/reviewer').get('persona'))!.value).toBe('I review code carefully.');
      expect((await engram.blocks('team').get('reviewer/persona'))!.value).toBe('I am the team.');
      expect((await engram.blocks('team').list()).map((b) => b.label)).toEqual(['reviewer/persona']);
      expect((await engram.blocks('team/reviewer').list()).map((b) => b.label)).toEqual(['persona']);
    } finally {
      await engram.close();
    }
  });
});

/** A store in the schema v3 layout: blocks under `agentId/label` whatever their ids hold. */
async function writeV3Store(
  name: string,
  blocks: [string, BlockRow][],
  changes: ChangeRow[],
  history: HistoryRow[],
): Promise<void> {
  const old = new Dexie(name);
  old.version(3).stores(V3_STORES);
  await old.open();
  await old.table(BLOCKS_TABLE).bulkPut(
    blocks.map(([, row]) => row),
    blocks.map(([key]) => key),
  );
  await old.table('changes').bulkAdd(changes);
  await old.table('history').bulkAdd(history);
  await old.table('meta').put({ key: 'schemaVersion', value: 3 });
  old.close();
}

describe('schema v4 upgrade', () => {
  it('open() moves a v3 store’s blocks under ambiguous keys to their own keys, with their log and history', async () => {
    const name = `blocks-v3-${Math.random().toString(36).slice(2)}`;
    const block = (agentId: string, label: string, value: string, version: number, userId?: string): BlockRow => ({
      agentId,
      label,
      value,
      limit: 2000,
      version,
      updatedAt: version,
      ...(userId === undefined ? {} : { userId }),
    });
    const teams = block('team', 'reviewer/persona', 'Team text', 2);
    const reviewers = block('team/reviewer', 'persona', 'Reviewer text', 1);
    await writeV3Store(
      name,
      [
        ['team/reviewer/persona', teams], // the reviewer's block, overwritten by the team's under the shared key
        ['helper/human', block('helper', 'human', 'Name: Ana', 1)],
        ['["helper","human","ana"]', block('helper', 'human', 'Ana’s own', 1, 'ana')],
      ],
      [
        { table: 'blocks', recordId: 'team/reviewer/persona', op: 'add', at: 1 },
        { table: 'blocks', recordId: 'team/reviewer/persona', op: 'update', at: 2 },
        { table: 'blocks', recordId: 'helper/human', op: 'add', at: 3 },
        { table: 'memories', recordId: 'team/reviewer/persona', op: 'add', at: 4 },
      ],
      [
        { table: 'blocks', recordId: 'team/reviewer/persona', op: 'add', before: null, after: reviewers, at: 1 },
        { table: 'blocks', recordId: 'team/reviewer/persona', op: 'update', before: reviewers, after: teams, at: 2 },
        {
          table: 'blocks',
          recordId: 'helper/human',
          op: 'add',
          before: null,
          after: block('helper', 'human', 'Name: Ana', 1),
          at: 3,
        },
      ],
    );

    const engram = await Engram.open({ name });
    try {
      expect((await engram.blocks('team').get('reviewer/persona'))!.value).toBe('Team text');
      expect(await engram.blocks('team/reviewer').get('persona')).toBeUndefined();
      expect((await engram.blocks('helper').get('human'))!.value).toBe('Name: Ana');
      expect((await engram.blocks('helper', { userId: 'ana' }).get('human'))!.value).toBe('Ana’s own');
      await engram.blocks('team/reviewer').set('persona', 'Reviewer again');
      expect((await engram.blocks('team').get('reviewer/persona'))!.value).toBe('Team text');
    } finally {
      await engram.close();
    }

    const db = new EngramDb(name);
    await db.open();
    try {
      expect((await db.blocks.toCollection().primaryKeys()).sort()).toEqual(
        [
          '["helper","human","ana"]',
          '["team","reviewer/persona"]',
          '["team/reviewer","persona"]',
          'helper/human',
        ].sort(),
      );
      const changes = await db.changes.toArray();
      expect(changes.filter((c) => c.at <= 4).map((c) => [c.table, c.recordId])).toEqual([
        ['blocks', '["team","reviewer/persona"]'],
        ['blocks', '["team","reviewer/persona"]'],
        ['blocks', 'helper/human'],
        ['memories', 'team/reviewer/persona'],
      ]);
      // Each history entry goes to the owner its row names.
      const history = await db.history.toArray();
      expect(history.filter((h) => h.at <= 3).map((h) => h.recordId)).toEqual([
        '["team/reviewer","persona"]',
        '["team","reviewer/persona"]',
        'helper/human',
      ]);
      expect(await db.meta.get('schemaVersion')).toEqual({ key: 'schemaVersion', value: 4 });
    } finally {
      db.close();
    }
  });

  it('open() upgrades a version 1 store holding both blocks of a key v3 would have merged', async () => {
    const name = `blocks-v1-both-${Math.random().toString(36).slice(2)}`;
    const old = await openV1Store(name);
    await old.table('blocks').bulkPut([
      { agentId: 'team', label: 'reviewer/persona', value: 'Team text', limit: 100, version: 1, updatedAt: 1 },
      { agentId: 'team/reviewer', label: 'persona', value: 'Reviewer text', limit: 100, version: 1, updatedAt: 2 },
    ]);
    old.close();
    const engram = await Engram.open({ name });
    try {
      expect((await engram.blocks('team').get('reviewer/persona'))!.value).toBe('Team text');
      expect((await engram.blocks('team/reviewer').get('persona'))!.value).toBe('Reviewer text');
    } finally {
      await engram.close();
    }
  });
});
