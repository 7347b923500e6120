import { describe, expect, it } from 'vitest';
import { Bm25 } from '../../bench/eval/bm25.js';
import { allTurns, generateDataset, surfaceVariant, type EvalDataset } from '../../bench/eval/dataset.js';
import { HELD_OUT_FACTS, TUNING_FACTS } from '../../bench/eval/facts.js';
import { firstHit, scoresOf } from '../../bench/eval/metrics.js';
import { mulberry32 } from '../../bench/util/rng.js';

const small = { users: 3, sessions: 12, facts: 10, chatter: [2, 4] as [number, number] };

function turnsById(d: EvalDataset): Map<string, string> {
  return new Map(allTurns(d).map((t) => [t.id, t.text]));
}

describe('eval dataset', () => {
  it('generateDataset() is deterministic for a seed and differs between splits', () => {
    expect(generateDataset('tuning', small)).toEqual(generateDataset('tuning', small));
    expect(allTurns(generateDataset('tuning', small)).map((t) => t.text)).not.toEqual(
      allTurns(generateDataset('held-out', small)).map((t) => t.text),
    );
  });

  it('the tuning and held-out fact libraries share no fact', () => {
    const tuning = new Set(TUNING_FACTS.map((f) => f.id));
    expect(HELD_OUT_FACTS.filter((f) => tuning.has(f.id))).toEqual([]);
    const held = generateDataset('held-out', small);
    expect(held.questions.every((q) => !tuning.has(q.factId))).toBe(true);
  });

  it('every answerable question has evidence turns that state the answer, and never quotes it', () => {
    const d = generateDataset('held-out', small);
    const text = turnsById(d);
    const library = new Map(HELD_OUT_FACTS.map((f) => [f.id, f]));
    for (const q of d.questions) {
      if (q.kind === 'absent') {
        expect(q.evidence).toEqual([]);
        continue;
      }
      expect(q.evidence.length).toBeGreaterThan(0);
      const stated = q.evidence.map((id) => text.get(id)!);
      // The value the question asks for appears in every evidence turn and in no question.
      const value = library
        .get(q.factId)!
        .values.find((v) => stated.every((s) => s.toLowerCase().includes(v.toLowerCase())));
      expect(value, `${q.text} -> ${stated.join(' | ')}`).toBeDefined();
      expect(q.text.toLowerCase()).not.toContain(value!.toLowerCase());
    }
  });

  it('surfaceVariant() changes the surface of a sentence', () => {
    const rng = mulberry32(3);
    for (const s of ["I'm allergic to peanuts.", 'I live in Porto.', 'My birthday is on May 30th.'])
      expect(surfaceVariant(rng, s)).not.toBe(s);
  });
});

describe('eval baseline and metrics', () => {
  it('Bm25.search() ranks the document with the rarer query term first', () => {
    const bm25 = new Bm25([
      { id: 'a', text: 'the cat sat on the mat' },
      { id: 'b', text: 'the zebra ate the grass' },
      { id: 'c', text: 'the cat and the zebra' },
    ]);
    expect(bm25.search('zebra cat', 3)[0]).toBe('c');
    expect(bm25.search('zebra', 3)).toEqual(['b', 'c']);
    expect(bm25.search('unknown', 3)).toEqual([]);
  });

  it('firstHit() and scoresOf() give recall@k and MRR over a list of 10', () => {
    expect(firstHit(['x', 'y', 'z'], new Set(['z', 'y']))).toBe(2);
    expect(firstHit(['x'], new Set(['q']))).toBeUndefined();
    const s = scoresOf([1, 4, 7, undefined]);
    expect(s).toEqual({ recallAt5: 0.5, recallAt10: 0.75, mrr: (1 + 1 / 4 + 1 / 7) / 4, questions: 4 });
  });
});
