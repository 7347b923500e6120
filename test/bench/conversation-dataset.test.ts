import { describe, expect, it } from 'vitest';
import { generateConversations } from '../../bench/eval/conversation-dataset.js';
import {
  HELD_OUT_EVENTS,
  HELD_OUT_NAMES,
  TUNING_EVENTS,
  TUNING_NAMES,
  WHEN,
} from '../../bench/eval/conversation-events.js';
import { allTurns } from '../../bench/eval/dataset.js';

const small = { conversations: 3, sessions: 14, eventsPerSpeaker: 4, chatter: [2, 3] as [number, number] };

describe('conversation eval dataset', () => {
  it('generateConversations() is deterministic for a seed and differs between halves', () => {
    expect(generateConversations('tuning', small)).toEqual(generateConversations('tuning', small));
    const tuning = allTurns(generateConversations('tuning', small)).map((t) => t.text);
    expect(tuning).not.toEqual(allTurns(generateConversations('held-out', small)).map((t) => t.text));
    expect(generateConversations('tuning', small).set).toBe('conversation');
  });

  it('the tuning and held-out halves share no event and no speaker name', () => {
    const events = new Set(TUNING_EVENTS.map((e) => e.id));
    expect(HELD_OUT_EVENTS.filter((e) => events.has(e.id))).toEqual([]);
    expect(HELD_OUT_NAMES.filter((n) => TUNING_NAMES.includes(n))).toEqual([]);
    const held = generateConversations('held-out', small);
    expect(held.questions.every((q) => !events.has(q.factId))).toBe(true);
    for (const name of TUNING_NAMES)
      expect(allTurns(held).some((t) => new RegExp(`\\b${name}\\b`).test(t.text))).toBe(false);
  });

  it('every answerable question has evidence that states a value the question never quotes', () => {
    const d = generateConversations('held-out', small);
    const text = new Map(allTurns(d).map((t) => [t.id, t.text.toLowerCase()]));
    const library = new Map(HELD_OUT_EVENTS.map((e) => [e.id, e]));
    const answerable = d.questions.filter((q) => q.kind !== 'absent');
    expect(answerable.length).toBeGreaterThan(15);
    for (const q of d.questions) {
      if (q.kind === 'absent') {
        expect(q.evidence).toEqual([]);
        continue;
      }
      const stated = q.evidence.map((id) => text.get(id)!);
      expect(stated.length).toBeGreaterThan(0);
      const values = [...Object.values(library.get(q.factId)!.slots).flat(), ...WHEN].map((v) => v.toLowerCase());
      const answer = values.find((v) => stated.every((s) => s.includes(v)) && !q.text.toLowerCase().includes(v));
      expect(answer, `${q.text} -> ${stated.join(' | ')}`).toBeDefined();
    }
  });

  it('questions name a speaker of their conversation and mostly reuse a word of their evidence', () => {
    const d = generateConversations('tuning', small);
    const text = new Map(allTurns(d).map((t) => [t.id, t.text.toLowerCase()]));
    const words = (s: string): string[] => s.toLowerCase().match(/[a-z]{5,}/g) ?? [];
    const answerable = d.questions.filter((q) => q.kind !== 'absent');
    let reusing = 0;
    for (const q of answerable) {
      expect(TUNING_NAMES.some((n) => q.text.includes(n))).toBe(true);
      const evidence = q.evidence.map((id) => text.get(id)!).join(' ');
      if (words(q.text).some((w) => !TUNING_NAMES.some((n) => n.toLowerCase() === w) && evidence.includes(w)))
        reusing += 1;
    }
    expect(reusing / answerable.length).toBeGreaterThan(0.6);
  });
});
