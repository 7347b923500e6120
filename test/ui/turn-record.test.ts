import { describe, expect, it } from 'vitest';
import { turnDetailsOf } from '../../ui/turn-record.js';

const TURN = {
  recalled: [{ id: 'm1', memory: 'I live in Porto', score: 0.51, similarity: 0.62 }],
  stored: [{ id: 'm2', memory: 'I drink tea', event: 'ADD' }],
  toolUses: [],
  timings: { recallMs: 12, modelMs: 40, storeMs: 3, totalMs: 60 },
};

describe('turnDetailsOf', () => {
  it('turnDetailsOf() reads the turn record the library stores with a reply', () => {
    expect(turnDetailsOf({ metadata: { turn: TURN } })).toEqual({
      recalled: TURN.recalled,
      stored: TURN.stored,
      timings: TURN.timings,
    });
  });

  it('turnDetailsOf() gives undefined for a reply without a record, or with a damaged one', () => {
    expect(turnDetailsOf({})).toBeUndefined();
    expect(turnDetailsOf({ metadata: { turn: 'yes' } })).toBeUndefined();
    for (const damaged of [
      { ...TURN, recalled: [{ id: 'm1', memory: 'x', score: 'high' }] },
      { ...TURN, recalled: [{ id: 'm1', memory: 'x', score: Number.NaN }] },
      { ...TURN, recalled: 'm1' },
      { ...TURN, stored: [{ id: 'm2', memory: 42, event: 'ADD' }] },
      { ...TURN, stored: [null] },
      { ...TURN, timings: { recallMs: 1, modelMs: 2, storeMs: 3 } },
      { ...TURN, timings: undefined },
    ]) {
      expect(turnDetailsOf({ metadata: { turn: damaged } }), JSON.stringify(damaged)).toBeUndefined();
    }
  });

  it('turnDetailsOf() keeps only the fields the chat shows', () => {
    const details = turnDetailsOf({
      metadata: { turn: { ...TURN, recalled: [{ id: 'm1', memory: 'x', score: 0.4, extra: '<b>' }] } },
    });
    expect(details?.recalled).toEqual([{ id: 'm1', memory: 'x', score: 0.4 }]);
  });
});
