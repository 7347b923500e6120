// Property: a search scoped to one user/agent/run never returns another's memories,
// over random data, random scopes and every search mode.
import { describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { openTemp, rng } from '../helpers.js';

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa'.split(' ');

describe('scoping', () => {
  it('search() and getAll() never cross scopes (property over random data)', async () => {
    const engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 48 }) });
    const random = rng(20261129);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const users = ['u1', 'u2', 'u3', undefined];
    const agents = ['a1', 'a2', undefined];
    const runs = ['r1', 'r2', undefined];
    for (let i = 0; i < 150; i++) {
      const text = Array.from({ length: 3 + Math.floor(random() * 4) }, () => pick(WORDS)).join(' ');
      const scope = { userId: pick(users), agentId: pick(agents), runId: pick(runs) };
      const clean = Object.fromEntries(Object.entries(scope).filter(([, v]) => v !== undefined));
      await engram.add(`${text} ${i}`, clean);
    }
    for (let trial = 0; trial < 60; trial++) {
      const scope = Object.fromEntries(
        Object.entries({ userId: pick(users), agentId: pick(agents), runId: pick(runs) }).filter(([, v]) => v !== undefined),
      );
      const query = Array.from({ length: 2 }, () => pick(WORDS)).join(' ');
      const mode = pick(['hybrid', 'vector', 'keyword'] as const);
      const { results } = await engram.search(query, { ...scope, mode, limit: 50 });
      for (const r of results) for (const [k, v] of Object.entries(scope)) expect(r[k as 'userId']).toBe(v);
      const { results: listed, total } = await engram.getAll({ ...scope, limit: 1000 });
      for (const r of listed) for (const [k, v] of Object.entries(scope)) expect(r[k as 'userId']).toBe(v);
      expect(listed).toHaveLength(total);
      // Every scoped memory that matches the keyword query is reachable (nothing hidden by the scope filter).
      if (mode === 'keyword' && Object.keys(scope).length > 0) {
        const expected = listed.filter((m) => query.split(' ').some((w) => m.memory.split(' ').includes(w)));
        expect(results.length).toBe(Math.min(50, expected.length));
      }
    }
    await engram.close();
  });
});
