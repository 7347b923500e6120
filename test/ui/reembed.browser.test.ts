// The shared re-embed pieces (ui/reembed-store.ts, ui/reembed-panel.ts, ui/model-picking.ts) in real
// Chromium: real IndexedDB, the panel's DOM, hash embedders standing in for the models (the end-to-end
// tests, test/desktop/reembed.e2e.test.ts and test/demo/embedding-model.e2e.test.ts, run the real ones).
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_EMBEDDING_MODEL,
  Engram,
  HashEmbedder,
  MINILM_EMBEDDING_MODEL,
  knownEmbeddingModel,
  type Embedder,
  type KnownEmbeddingModel,
} from '../../lib/index.js';
import { loadModelChoice, modelServed, saveModelChoice } from '../../ui/model-picking.js';
import { ReembedPanel } from '../../ui/reembed-panel.js';
import { reembedStore, type OpenWithModel, type ReembedOutcome } from '../../ui/reembed-store.js';

const GLOVE = knownEmbeddingModel(DEFAULT_EMBEDDING_MODEL)!;
const MINILM = knownEmbeddingModel(MINILM_EMBEDDING_MODEL)!;

/** Calls past `after` wait for `until` (the test looks at the panel while the run stands still). */
interface Hold {
  after: number;
  until: Promise<void>;
}

/** A hash embedder that answers to a known model's id and dimension, `delayMs` per call. */
function standIn(model: KnownEmbeddingModel, delayMs = 0, failOnCall?: number, hold?: Hold): Embedder {
  const inner = new HashEmbedder({ dimensions: model.dimensions });
  let calls = 0;
  return {
    id: model.id,
    dimensions: model.dimensions,
    async embed(texts, options) {
      calls++;
      if (hold !== undefined && calls > hold.after) await hold.until;
      if (delayMs > 0) await new Promise((done) => setTimeout(done, delayMs));
      if (calls === failOnCall) throw new TypeError('the model crashed');
      return inner.embed(texts, options);
    },
    dispose: () => inner.dispose(),
  };
}

const opened: Engram[] = [];
afterEach(async () => {
  for (const e of opened.splice(0)) await e.close();
  document.body.replaceChildren();
});

async function storeWith(n: number): Promise<{ name: string; open: (fail?: number, hold?: Hold) => OpenWithModel }> {
  const name = `ui-reembed-${Math.random().toString(36).slice(2)}`;
  const e = await Engram.open({ name, embedder: standIn(GLOVE) });
  for (let i = 0; i < n; i += 50)
    await e.add(
      Array.from({ length: Math.min(50, n - i) }, (_, j) => ({
        role: 'user' as const,
        content: `fact ${i + j} about topic ${i + j}`,
      })),
      { userId: 'u' },
    );
  await e.close();
  const open =
    (fail?: number, hold?: Hold): OpenWithModel =>
    async (model, reembed) => {
      const engram = await Engram.open({
        name,
        embedder: standIn(model, model === MINILM ? 5 : 0, fail, model === MINILM ? hold : undefined),
        ...(reembed === undefined ? {} : { reembed }),
      });
      opened.push(engram);
      return engram;
    };
  return { name, open };
}

describe('ReembedPanel with reembedStore()', () => {
  it('offers, shows count and rate while running, and reports the result; the store then holds the new model', async () => {
    const { name, open } = await storeWith(300);
    const current = await open()(GLOVE);
    let engram = current;
    const progress: number[] = [];
    let release = (): void => undefined;
    const hold: Hold = { after: 2, until: new Promise((done) => (release = done)) };
    const panel = new ReembedPanel(
      (signal, onProgress) =>
        reembedStore({
          current: engram,
          target: MINILM,
          fallback: GLOVE,
          open: open(undefined, hold),
          signal,
          onProgress: (done, total) => {
            progress.push(done);
            onProgress(done, total);
          },
        }),
      (outcome) => {
        engram = outcome.engram;
      },
      (e) => {
        throw e;
      },
    );
    document.body.append(panel.root);
    expect(panel.state).toBe('hidden');
    panel.offer({ from: GLOVE.label, to: MINILM.label, count: 300 });
    expect(panel.state).toBe('offer');
    const start = panel.root.querySelector<HTMLButtonElement>('[data-testid="reembed-start"]')!;
    expect(start.textContent).toBe('Re-embed 300 memories');
    start.click();
    await expect.poll(() => panel.root.dataset['done'], { timeout: 20_000 }).toBe('128');
    expect(panel.state).toBe('running');
    expect(panel.root.querySelector('[data-testid="reembed-count"]')?.textContent).toBe('128 / 300');
    expect(panel.root.querySelector('progress')?.value).toBe(128);
    expect(panel.root.querySelector('[data-testid="reembed-rate"]')?.textContent).toMatch(/\/s · about .* left$/);
    release();
    await expect.poll(() => panel.state, { timeout: 20_000 }).toBe('done');
    expect(progress).toEqual([0, 64, 128, 192, 256, 300]);
    expect(panel.root.querySelector('[data-testid="reembed-result"]')?.textContent).toMatch(
      /^Re-embedded 300 memories with all-MiniLM-L6-v2 .* in .*\. Search now uses it\.$/,
    );
    expect((await engram.ready()).embedderId).toBe(MINILM.id);
    expect(await Engram.storedEmbedder(name)).toEqual({ id: MINILM.id, dimensions: 384 });
    expect(current.closed).toBe(true);
    // The result stays when there is nothing more to offer.
    panel.offer(undefined);
    expect(panel.state).toBe('done');
  });

  it('Cancel stops the run: the store reopens with its old model, every vector as it was, and the offer comes back', async () => {
    const { name, open } = await storeWith(300);
    let engram = await open()(GLOVE);
    const before = (await engram.search('fact 7 about topic 7', { mode: 'vector', limit: 3 })).results.map((r) => r.id);
    const ended: ReembedOutcome[] = [];
    // The second batch waits until after Cancel: the run is stopped in the middle, deterministically.
    let release = (): void => undefined;
    const hold: Hold = { after: 1, until: new Promise((done) => (release = done)) };
    const panel = new ReembedPanel(
      (signal, onProgress) =>
        reembedStore({
          current: engram,
          target: MINILM,
          fallback: GLOVE,
          open: open(undefined, hold),
          signal,
          onProgress,
        }),
      (outcome) => {
        ended.push(outcome);
        engram = outcome.engram;
        panel.offer({ from: GLOVE.label, to: MINILM.label, count: 300 });
      },
      (e) => {
        throw e;
      },
    );
    document.body.append(panel.root);
    panel.offer({ from: GLOVE.label, to: MINILM.label, count: 300 });
    panel.root.querySelector<HTMLButtonElement>('[data-testid="reembed-start"]')!.click();
    await expect.poll(() => panel.root.dataset['done'], { timeout: 20_000 }).toBe('64');
    const cancel = panel.root.querySelector<HTMLButtonElement>('[data-testid="reembed-cancel"]')!;
    cancel.click();
    expect([cancel.disabled, cancel.textContent]).toEqual([true, 'Cancelling…']);
    await expect.poll(() => ended.length, { timeout: 20_000 }).toBe(1);
    release();
    expect(ended[0]!.kind).toBe('cancelled');
    expect(panel.state).toBe('offer');
    expect(panel.root.dataset['outcome']).toBe('cancelled');
    expect(panel.root.querySelector('[data-testid="reembed-result"]')?.textContent).toMatch(
      /^Cancelled after .*: nothing was changed, the store keeps the vectors of offline GloVe word vectors/,
    );
    expect((await engram.ready()).embedderId).toBe(GLOVE.id);
    expect(await Engram.storedEmbedder(name)).toEqual({ id: GLOVE.id, dimensions: 100 });
    expect(
      (await engram.search('fact 7 about topic 7', { mode: 'vector', limit: 3 })).results.map((r) => r.id),
    ).toEqual(before);
  });

  it('a model that fails mid-way ends as failed, with the reason, and the store open with its old model', async () => {
    const { open } = await storeWith(200);
    let engram = await open()(GLOVE);
    const panel = new ReembedPanel(
      (signal, onProgress) =>
        reembedStore({ current: engram, target: MINILM, fallback: GLOVE, open: open(2), signal, onProgress }),
      (outcome) => {
        engram = outcome.engram;
      },
      (e) => {
        throw e;
      },
    );
    document.body.append(panel.root);
    const outcome = await panel.start({ from: GLOVE.label, to: MINILM.label, count: 200 });
    expect(outcome.kind).toBe('failed');
    expect(panel.state).toBe('failed');
    expect(panel.root.querySelector('[data-testid="reembed-result"]')?.textContent).toContain('the model crashed');
    expect((await engram.ready()).embedderId).toBe(GLOVE.id);
    expect((await engram.getAll({ limit: 1 })).total).toBe(200);
  });

  it('draws memories and model names as text, never as markup', () => {
    const panel = new ReembedPanel(
      () => Promise.reject(new TypeError('not run')),
      () => undefined,
      () => undefined,
    );
    panel.offer({ from: '<img src=x onerror=alert(1)>', to: 'B', count: 1 });
    expect(panel.root.querySelector('img')).toBeNull();
    expect(panel.root.textContent).toContain('<img src=x onerror=alert(1)>');
    expect(panel.root.querySelector('[data-testid="reembed-start"]')?.textContent).toBe('Re-embed 1 memory');
  });
});

describe('model-picking', () => {
  it('loadModelChoice() keeps only a known model id; saveModelChoice() saves nothing else', () => {
    const key = `ui-choice-${Math.random()}`;
    expect(loadModelChoice(key)).toBeUndefined();
    localStorage.setItem(key, '{"id":"x"}');
    expect(loadModelChoice(key)).toBeUndefined();
    saveModelChoice(key, 'not-a-model');
    expect(localStorage.getItem(key)).toBe('{"id":"x"}');
    saveModelChoice(key, GLOVE.id);
    expect(loadModelChoice(key)).toBe(GLOVE.id);
    localStorage.removeItem(key);
  });

  it('modelServed() finds the folders the test server serves at /models/, and nothing for a missing one', async () => {
    // The browser tests load the models from /models/ (TransformersEmbedder's default in browsers).
    expect(await modelServed(DEFAULT_EMBEDDING_MODEL)).toBe(true);
    expect(await modelServed(MINILM_EMBEDDING_MODEL)).toBe(true);
    // A server may answer a missing file with its HTML page (status 200): not a JSON object, not a model.
    expect(await modelServed('no-such-model-folder')).toBe(false);
  });
});
