// Property: a search scoped to one user/agent/run never returns another's memories,
// over random data, random scopes and every search mode; agent tools and faces
// bound to an agent and a user never read or write another's texts.
import { describe, expect, it } from 'vitest';
import { AgentTools } from '../../lib/agent/tools.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { openTemp, rng } from '../helpers.js';

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa'.split(
  ' ',
);

describe('scoping', () => {
  it('search() and getAll() never cross scopes (property over random data)', async () => {
    const engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 48 }) });
    const random = rng(20261129);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
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
        Object.entries({ userId: pick(users), agentId: pick(agents), runId: pick(runs) }).filter(
          ([, v]) => v !== undefined,
        ),
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

// Every tool, every face and every search mode, for agents talking to several users:
// each text carries its owner's tag, and no read may show another owner's tag.
describe('scoping of agent tools and faces', () => {
  const AGENTS = ['a1', 'a2'] as const;
  const USERS = ['u1', 'u2', 'u3'] as const;
  /** The tag of an owner's texts; the agent's own (unshared) texts use user 0, its shared block 's'. */
  const tag = (agent: number, user: number | 's'): string => `k${agent}${user}x`;
  const TAG = /k\d[\ds]x/g;
  const tagsIn = (text: string | undefined): string[] => text?.match(TAG) ?? [];

  it('every tool and face reads and writes only inside its agent and user (property over random data)', async () => {
    const engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 48 }) });
    const random = rng(20261201);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const words = (n: number): string => Array.from({ length: n }, () => pick(WORDS)).join(' ');
    const owners = AGENTS.flatMap((agentId, a) =>
      USERS.map((userId, u) => ({
        agentId,
        userId,
        a: a + 1,
        u: u + 1,
        tools: new AgentTools(engram, { agentId, userId }),
      })),
    );
    const allTags = [
      ...owners.map((o) => tag(o.a, o.u)),
      ...AGENTS.flatMap((_, a) => [tag(a + 1, 0), tag(a + 1, 's')]),
    ];

    // The agents' own texts: an unshared block, a shared block, archival passages without a user.
    for (const [i, agentId] of AGENTS.entries()) {
      await engram.blocks(agentId).set('private', `agent notes ${tag(i + 1, 0)}`);
      await engram.blocks(agentId).set('persona', `agent persona ${tag(i + 1, 's')}`, { shared: true });
      await engram.archival(agentId).insert(`${words(3)} ${tag(i + 1, 0)}`);
      await engram.add(`${words(3)} ${tag(i + 1, 0)}`, { agentId });
    }
    // Each owner writes through every writing tool and face, in random order.
    for (let round = 0; round < 3; round++) {
      for (const o of [...owners].sort(() => random() - 0.5)) {
        const mine = tag(o.a, o.u);
        expect(
          await o.tools.call('save_to_memory', { thinking: 't', content: [`${words(3)} ${mine} ${round}`] }),
        ).toMatch(/^Saved/);
        expect(await o.tools.call('archival_memory_insert', { content: `${words(3)} ${mine} r${round}` })).toBe(
          'Inserted into archival memory.',
        );
        expect(
          await o.tools.call('core_memory_append', {
            label: pick(['human', 'notes', 'persona']),
            content: `${words(2)} ${mine}`,
          }),
        ).toMatch(/^Block/);
        await engram.archival(o.agentId, { userId: o.userId }).insert(`${words(3)} ${mine} face${round}`);
        await engram.blocks(o.agentId, { userId: o.userId }).append('facts', `${words(2)} ${mine}`);
        await engram
          .persistent({ agentId: o.agentId, userId: o.userId })
          .saveToMemory({ content: [`${words(3)} ${mine} p${round}`] });
        await engram.conversation(`t-${o.agentId}-${o.userId}`, { agentId: o.agentId, userId: o.userId }).add({
          role: 'user',
          content: `${words(3)} ${mine} m${round}`,
          createdAt: Date.UTC(2026, 2, 1 + round),
        });
      }
    }

    for (let trial = 0; trial < 24; trial++) {
      const o = pick(owners);
      const mine = tag(o.a, o.u);
      const allowed = new Set([mine, tag(o.a, 's')]);
      const query = `${pick(WORDS)} ${pick(allTags)}`;
      const scope = { agentId: o.agentId, userId: o.userId };
      const reads: [string, string | undefined][] = [
        [
          'recall_from_memory',
          await o.tools.call('recall_from_memory', { keywords: [query, pick(allTags)], limit: 50 }),
        ],
        ['archival_memory_search', await o.tools.call('archival_memory_search', { query, page: pick([0, 1]) })],
        ['conversation_search', await o.tools.call('conversation_search', { query })],
        [
          'conversation_search_date',
          await o.tools.call('conversation_search_date', {
            start_date: '2026-01-01',
            end_date: '2026-12-31',
            page: pick([0, 1]),
          }),
        ],
        [
          'core_memory_append',
          await o.tools.call('core_memory_append', { label: pick(['human', 'notes', 'persona']), content: mine }),
        ],
        [
          'core_memory_replace',
          await o.tools.call('core_memory_replace', { label: 'facts', old_content: mine, new_content: mine }),
        ],
        [
          'archival face',
          JSON.stringify(await engram.archival(o.agentId, { userId: o.userId }).search(query, { count: 100 })),
        ],
        ['blocks face list', JSON.stringify(await engram.blocks(o.agentId, { userId: o.userId }).list())],
        [
          'blocks face get',
          JSON.stringify(
            await engram
              .blocks(o.agentId, { userId: o.userId })
              .get(pick(['human', 'notes', 'persona', 'private', 'facts'])),
          ),
        ],
        ['persistent retrieve', await engram.persistent(scope).retrieve(query, { limit: 50, minSimilarity: -1 })],
        ['recall text', JSON.stringify(await engram.recall.textSearch(query, { ...scope, count: 100 }))],
        [
          'recall date',
          JSON.stringify(await engram.recall.dateSearch('2026-01-01', '2026-12-31', { ...scope, count: 100 })),
        ],
        [
          'context window',
          JSON.stringify(
            await engram.conversation(`t-${o.agentId}-${o.userId}`, scope).contextWindow({ maxTokens: 10_000 }),
          ),
        ],
        ['getAll', JSON.stringify(await engram.getAll({ ...scope, limit: 1000 }))],
      ];
      for (const mode of ['hybrid', 'vector', 'keyword'] as const)
        reads.push([`search ${mode}`, JSON.stringify(await engram.search(query, { ...scope, mode, limit: 100 }))]);
      for (const [what, text = ''] of reads) {
        for (const t of tagsIn(text))
          expect(allowed.has(t), `${what} of ${mine} showed ${t}: ${text.slice(0, 300)}`).toBe(true);
      }
      // And the scope hides nothing of the owner's own.
      expect(await o.tools.call('archival_memory_search', { query: mine })).toContain(mine);
      expect(tagsIn(JSON.stringify(await engram.blocks(o.agentId, { userId: o.userId }).list()))).toContain(
        tag(o.a, 's'),
      );
    }
    // The agents' own blocks stay theirs: no user's write landed in them.
    for (const [i, agentId] of AGENTS.entries()) {
      for (const t of tagsIn(JSON.stringify(await engram.blocks(agentId).list())))
        expect([tag(i + 1, 0), tag(i + 1, 's')]).toContain(t);
    }
    await engram.close();
  });
});
