// engram's long-term memory as a LangChain VectorStore, driven by real @langchain/core code:
// asRetriever() inside a small chain (prompt, fake chat model, output parser). No network.
import { Document } from '@langchain/core/documents';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { FakeChatModel } from '@langchain/core/utils/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import type { Engram } from '../../lib/index.js';
import { EngramVectorStore } from '../../lib/langchain/index.js';
import { openTemp } from '../helpers.js';

let engram: Engram;
beforeEach(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 256 }) });
});
afterEach(async () => {
  await engram.close();
});

const ANA = [
  new Document({ pageContent: 'Ana is allergic to peanuts', metadata: { topic: 'health', year: 2024 } }),
  new Document({ pageContent: 'Ana takes the train to Porto every Friday', metadata: { topic: 'travel', year: 2025 } }),
  new Document({ pageContent: 'Ana does not eat peanut butter or satay', metadata: { topic: 'health', year: 2025 } }),
];

describe('EngramVectorStore', () => {
  it("asRetriever() feeds a chain: the fake chat model is prompted with the scope's memories only", async () => {
    const ana = new EngramVectorStore(engram, { userId: 'ana' });
    const ben = new EngramVectorStore(engram, { userId: 'ben' });
    await ana.addDocuments(ANA);
    await ben.addDocuments([
      { pageContent: 'Ben is allergic to peanuts and shellfish', metadata: { topic: 'health' } },
    ]);

    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Answer from these memories:\n{context}'],
      ['human', '{question}'],
    ]);
    const chain = RunnableSequence.from([
      {
        context: ana.asRetriever({ k: 2 }).pipe((docs: Document[]) => docs.map((d) => d.pageContent).join('\n')),
        question: new RunnablePassthrough(),
      },
      prompt,
      new FakeChatModel({}), // answers with the prompt it was given
      new StringOutputParser(),
    ]);
    const answer = await chain.invoke('peanuts allergic');
    expect(answer).toBe(
      'Answer from these memories:\nAna is allergic to peanuts\nAna does not eat peanut butter or satay\npeanuts allergic',
    );
    expect(answer).not.toContain('Ben');
  });

  it('addDocuments() stores text and metadata in the scope; similaritySearchWithScore() ranks with scores and filters', async () => {
    const store = new EngramVectorStore(engram, { userId: 'ana', agentId: 'helper' });
    const ids = await store.addDocuments(ANA);
    expect(ids).toHaveLength(3);
    expect(await store.addDocuments([ANA[0]!])).toEqual([ids[0]]); // a text the scope holds: the standing memory
    const stored = await engram.get(ids[1]!);
    expect(stored).toMatchObject({
      memory: 'Ana takes the train to Porto every Friday',
      userId: 'ana',
      agentId: 'helper',
      metadata: { topic: 'travel', year: 2025 },
    });

    const hits = await store.similaritySearchWithScore('peanuts', 3);
    expect(hits[0]![0]).toMatchObject({
      pageContent: 'Ana is allergic to peanuts',
      metadata: { topic: 'health', year: 2024 },
      id: ids[0],
    });
    const scores = hits.map(([, s]) => s);
    expect(scores.every((s) => s >= 0 && s <= 1)).toBe(true);
    expect(scores[0]).toBeGreaterThan(0);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    const travel = await store.similaritySearch('Ana', 5, { metadata: { topic: 'travel' } });
    expect(travel.map((d) => d.pageContent)).toEqual(['Ana takes the train to Porto every Friday']);
    const recent = await store.similaritySearch('Ana peanut', 5, {
      metadata: { topic: 'health', year: { in: [2025, 2026] } },
    });
    expect(recent.map((d) => d.pageContent)).toEqual(['Ana does not eat peanut butter or satay']);
    const filtered = await store.asRetriever({ k: 5, filter: { metadata: { topic: 'health' } } }).invoke('Ana');
    expect(filtered.map((d) => d.pageContent).sort()).toEqual([
      'Ana does not eat peanut butter or satay',
      'Ana is allergic to peanuts',
    ]);
  });

  it('delete() removes by id within the scope only, or by filter; deleted text is not found again', async () => {
    const ana = new EngramVectorStore(engram, { userId: 'ana' });
    const ben = new EngramVectorStore(engram, { userId: 'ben' });
    const ids = await ana.addDocuments(ANA);
    const [benId] = await ben.addDocuments([
      { pageContent: 'Ben is allergic to peanuts', metadata: { topic: 'health' } },
    ]);

    await ana.delete({ ids: [ids[0]!, benId!, 'no-such-id'] }); // Ben's id is outside Ana's scope: left alone
    expect(await engram.get(ids[0]!)).toBeUndefined();
    expect(await engram.get(benId!)).toMatchObject({ memory: 'Ben is allergic to peanuts' });
    expect((await ana.similaritySearch('allergic to peanuts', 5)).map((d) => d.pageContent)).not.toContain(
      'Ana is allergic to peanuts',
    );

    await ana.delete({ filter: { metadata: { topic: 'health' } } });
    expect((await engram.getAll({ userId: 'ana' })).results.map((m) => m.memory)).toEqual([
      'Ana takes the train to Porto every Friday',
    ]);
    expect((await engram.getAll({ userId: 'ben' })).total).toBe(1);
  });

  it('refuses what it cannot honour with typed errors: vectors, caller ids, a filter that names a scope', async () => {
    const store = new EngramVectorStore(engram, { userId: 'ana' });
    await expect(store.addVectors()).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('engram computes its own embeddings') as string,
    });
    await expect(store.similaritySearchVectorWithScore()).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(store.embeddings.embedQuery('x')).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(store.addDocuments(ANA, { ids: ['a', 'b', 'c'] })).rejects.toMatchObject({
      code: 'VALIDATION',
      field: 'options.ids',
    });
    // A model-written filter (self-querying) narrows the scope, never widens it.
    await expect(store.similaritySearch('x', 3, { userId: 'ben' } as never)).rejects.toMatchObject({
      code: 'VALIDATION',
      field: 'filter.userId',
    });
    await expect(store.delete({})).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(store.addDocuments([{ pageContent: 'x', metadata: { f: () => 1 } }])).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    expect(() => new EngramVectorStore(engram, { userId: 'ana', mode: 'fuzzy' as 'hybrid' })).toThrow(/options.mode/);
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(0);
  });
});
