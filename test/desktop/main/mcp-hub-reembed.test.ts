// The desktop's MCP hub during a re-embed of the renderer's store (engram.reembed on the open
// engram): an agent's calls through the hub's whole path (Streamable HTTP, main process, IPC, the
// renderer's answerHubCall) keep answering mid-run, and what it saves then is found after the switch.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../../lib/embed/hash-embedder.js';
import type { Embedder, EmbedOptions } from '../../../lib/embed/embedder.js';
import { callText, startHubFixture, type HubFixture } from './hub-fixture.js';

let hub: HubFixture;

beforeEach(async () => {
  hub = await startHubFixture();
});

afterEach(async () => {
  await hub.close();
});

/** The new model, running `onBatch` before each batch it embeds (the test calls the hub mid-run there). */
function hooked(onBatch: (batch: number) => Promise<void>): Embedder {
  const inner = new HashEmbedder({ dimensions: 32 });
  let batches = 0;
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    async embed(texts: readonly string[], options?: EmbedOptions) {
      await onBatch(++batches);
      return inner.embed(texts, options);
    },
    dispose: () => inner.dispose(),
  };
}

describe('MCP hub during a re-embed', () => {
  it("an agent's recall and save through the hub answer mid-run; the switch keeps what it saved", async () => {
    const ana = await hub.createClient('Claude Desktop', { agentId: 'claude', userId: 'ana' });
    const client = await hub.connect(ana.token);
    await callText(client, 'save_to_memory', { thinking: 'health', content: ['Ana is allergic to penicillin'] });
    for (let i = 0; i < 130; i++) await hub.engram.add(`filler fact number ${i}`, { agentId: 'claude', userId: 'ana' });
    const during: string[] = [];
    const result = await hub.engram.reembed(
      hooked(async (batch) => {
        if (batch !== 2) return;
        during.push(await callText(client, 'recall_from_memory', { keywords: ['penicillin'], limit: null }));
        during.push(await callText(client, 'save_to_memory', { thinking: 'food', content: ['Ana loves spicy ramen'] }));
      }),
    );
    expect(result.total).toBe(132);
    expect(during[0]).toContain('Ana is allergic to penicillin');
    expect(during[1]).not.toMatch(/error|closed/i);
    expect((await hub.engram.ready()).embedderId).toBe('hash-32');
    expect(await callText(client, 'recall_from_memory', { keywords: ['ramen'], limit: null })).toContain(
      'Ana loves spicy ramen',
    );
    const found = await hub.engram.search('Ana loves spicy ramen', { userId: 'ana', mode: 'vector', limit: 1 });
    expect(found.results[0]?.memory).toBe('Ana loves spicy ramen');
  });
});
