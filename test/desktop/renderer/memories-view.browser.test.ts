// The memories view in real Chromium with the real MiniLM model (in engram's worker, served by Vite from
// models/): a hybrid search of a question never told shows no match, though MiniLM's per-query fusion
// scores its nearest memory near 1; a told question shows its memory first (memory-matches.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engram, MINILM_EMBEDDING_MODEL, TransformersEmbedder } from '../../../lib/index.js';
import { MemoriesView } from '../../../desktop/renderer/memories-view.js';
import { createWebBridge } from '../../../desktop/renderer/web-bridge.js';
import { testAppContext } from './app-context-fixture.js';

const FACTS = [
  'My favourite food is spicy ramen from the place downtown.',
  'I am allergic to cats, so no pets with fur.',
  'The quarterly report is due on the first Friday of next month.',
  'My sister lives in Lisbon and works as an architect.',
  'I go running every morning before work.',
  'The car needs new tyres before winter.',
];

describe('MemoriesView (browser, MiniLM)', () => {
  let engram: Engram;
  let view: MemoriesView;
  const errors: unknown[] = [];

  beforeAll(async () => {
    engram = await Engram.open({
      name: `memories-view-${Math.random().toString(36).slice(2)}`,
      embedder: () => TransformersEmbedder.create({ model: MINILM_EMBEDDING_MODEL, localModelPath: '/models/' }),
    });
    for (const text of FACTS) await engram.add(text, { userId: 'u1' });
    const ctx = testAppContext({
      engram,
      bridge: createWebBridge(),
      dbName: 'memories-view',
      showError: (e) => errors.push(e),
    });
    view = new MemoriesView(ctx);
    document.body.append(view.root);
  });

  afterAll(async () => {
    view.root.remove();
    await engram.close();
  });

  /** Searches as the user does (hybrid is the view's default mode); the listed matches and the heading. */
  async function search(query: string): Promise<{ matches: string[]; weaker: number; heading: string }> {
    const input = view.root.querySelector<HTMLInputElement>('[data-testid="search-input"]')!;
    input.value = query;
    await view.search();
    const results = view.root.querySelector('[data-testid="search-results"]')!;
    expect(results.getAttribute('data-state')).toBe('done');
    const more = view.root.querySelector('[data-testid="search-show-weaker"]');
    return {
      matches: [...results.querySelectorAll('.result .text')].map((e) => e.textContent),
      weaker: Number(/Show (\d+) weaker/.exec(more?.textContent ?? '')?.[1] ?? 0),
      heading: view.root.querySelector('[data-testid="list-heading"]')!.textContent,
    };
  }

  it('search() of a question never told lists no match, only weaker results on request', async () => {
    const shown = await search('What is my passport number?');
    expect(shown.matches).toEqual([]);
    expect(shown.heading).toMatch(/^No match for “What is my passport number\?” · Hybrid/);
    expect(shown.weaker).toBe(FACTS.length);
    expect(errors).toEqual([]);
  });

  it('search() of a told question lists its memory first', async () => {
    const shown = await search('What does she like to eat?');
    expect(shown.matches[0]).toBe(FACTS[0]);
    expect(shown.matches).not.toContain(FACTS[5]);
    expect(shown.heading).toMatch(/best match/);
    expect(errors).toEqual([]);
  });
});
