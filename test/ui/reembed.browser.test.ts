// The shared re-embed pieces (ui/reembed-store.ts, ui/reembed-panel.ts, ui/model-picking.ts) in real
// Chromium: real IndexedDB, the panel's DOM, the re-embed on the open store, hash embedders standing in for the models (the end-to-end
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
import { ModelPicker, REEMBED_WORK } from '../../ui/model-picker.js';
import { loadModelChoice, modelServed, saveModelChoice } from '../../ui/model-picking.js';
import { ReembedPanel } from '../../ui/reembed-panel.js';
import { reembedStore, type EmbedderFor, type ReembedOutcome } from '../../ui/reembed-store.js';
import { StoreWork } from '../../ui/store-work.js';

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

/** A store of `n` memories made with the GloVe stand-in, open with it. */
async function storeWith(n: number): Promise<{ name: string; engram: Engram }> {
  const name = `ui-reembed-${Math.random().toString(36).slice(2)}`;
  const engram = await Engram.open({ name, embedder: standIn(GLOVE) });
  opened.push(engram);
  for (let i = 0; i < n; i += 50)
    await engram.add(
      Array.from({ length: Math.min(50, n - i) }, (_, j) => ({
        role: 'user' as const,
        content: `fact ${i + j} about topic ${i + j}`,
      })),
      { userId: 'u' },
    );
  return { name, engram };
}

/**
 * The stand-in's factory for a model, as an app's: it reports a two-file download and load
 * (transformers.js's events) before it hands the embedder over.
 */
function embedderFor(fail?: number, hold?: Hold): EmbedderFor {
  return (model, onLoad) => async () => {
    for (const [file, total] of [
      ['config.json', 700],
      ['onnx/model_quantized.onnx', 23_000_000],
    ] as const) {
      onLoad({ status: 'initiate', file });
      onLoad({ status: 'progress', file, loaded: total / 2, total, progress: 50 });
      await new Promise((done) => setTimeout(done, 5));
      onLoad({ status: 'done', file, loaded: total, total });
    }
    onLoad({ status: 'ready' });
    return standIn(model, model === MINILM ? 5 : 0, fail, model === MINILM ? hold : undefined);
  };
}

describe('ReembedPanel with reembedStore()', () => {
  it("shows the model's load, then count and rate; the store stays open and searchable throughout, then holds the new model", async () => {
    const { name, engram } = await storeWith(300);
    const progress: number[] = [];
    const loads: string[] = [];
    let release = (): void => undefined;
    const hold: Hold = { after: 2, until: new Promise((done) => (release = done)) };
    const ended: ReembedOutcome[] = [];
    const panel = new ReembedPanel(
      (signal, onProgress, onModelLoad) =>
        reembedStore({
          engram,
          target: MINILM,
          embedderFor: embedderFor(undefined, hold),
          signal,
          onProgress: (done, total) => {
            progress.push(done);
            onProgress(done, total);
          },
          onModelLoad: (p) => {
            // What the panel shows at each model report, before any re-embed report.
            loads.push(`${p.status} ${panel.root.dataset['phase']} ${progress.length}`);
            onModelLoad(p);
          },
        }),
      (outcome) => ended.push(outcome),
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
    await expect.poll(() => panel.root.dataset['model'], { timeout: 20_000 }).toBe('100');
    expect(loads.every((l) => l.endsWith('model 0'))).toBe(true);
    expect(loads.map((l) => l.split(' ')[0])).toEqual([
      'initiate',
      'progress',
      'done',
      'initiate',
      'progress',
      'done',
      'ready',
    ]);
    await expect.poll(() => panel.root.dataset['done'], { timeout: 20_000 }).toBe('128');
    expect([panel.state, panel.root.dataset['phase']]).toEqual(['running', 'reembed']);
    expect(panel.root.querySelector('[data-testid="reembed-count"]')?.textContent).toBe('128 / 300');
    expect(panel.root.querySelector('progress')?.value).toBe(128);
    expect(panel.root.querySelector('[data-testid="reembed-rate"]')?.textContent).toMatch(/\/s · about .* left$/);
    // Mid-run the store is open: it searches with its old model and takes writes.
    expect(engram.closed).toBe(false);
    expect((await engram.ready()).embedderId).toBe(GLOVE.id);
    const found = await engram.search('fact 7 about topic 7', { userId: 'u', mode: 'vector', limit: 1 });
    expect(found.results[0]?.memory).toBe('fact 7 about topic 7');
    await engram.add('written while re-embedding about kites', { userId: 'u' });
    release();
    await expect.poll(() => panel.state, { timeout: 20_000 }).toBe('done');
    expect(progress.slice(0, 6)).toEqual([0, 64, 128, 192, 256, 300]);
    expect(ended.map((o) => o.kind)).toEqual(['done']);
    expect(panel.root.querySelector('[data-testid="reembed-result"]')?.textContent).toMatch(
      /^Re-embedded 301 memories with all-MiniLM-L6-v2 .* in .*\. Search now uses it\.$/,
    );
    expect((await engram.ready()).embedderId).toBe(MINILM.id);
    expect(await Engram.storedEmbedder(name)).toEqual({ id: MINILM.id, dimensions: 384 });
    const kite = await engram.search('written while re-embedding about kites', { userId: 'u', mode: 'vector' });
    expect(kite.results[0]?.memory).toBe('written while re-embedding about kites');
    // The result stays when there is nothing more to offer.
    panel.offer(undefined);
    expect(panel.state).toBe('done');
  });

  it('Cancel stops the run: the store keeps its old model, searching as before, and the offer comes back', async () => {
    const { name, engram } = await storeWith(300);
    const before = (await engram.search('fact 7 about topic 7', { mode: 'vector', limit: 3 })).results.map((r) => r.id);
    const ended: ReembedOutcome[] = [];
    // The second batch waits until after Cancel: the run is stopped in the middle, deterministically.
    let release = (): void => undefined;
    const hold: Hold = { after: 1, until: new Promise((done) => (release = done)) };
    const panel = new ReembedPanel(
      (signal, onProgress, onModelLoad) =>
        reembedStore({
          engram,
          target: MINILM,
          embedderFor: embedderFor(undefined, hold),
          signal,
          onProgress,
          onModelLoad,
        }),
      (outcome) => {
        ended.push(outcome);
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

  it('Cancel while the model loads: nothing was embedded, and the store keeps its model', async () => {
    const { engram } = await storeWith(50);
    let loaded = (): void => undefined;
    const slow: EmbedderFor = (model, onLoad) => async () => {
      onLoad({ status: 'progress', file: 'onnx/model_quantized.onnx', loaded: 1, total: 10, progress: 10 });
      await new Promise<void>((done) => (loaded = done));
      return standIn(model);
    };
    const panel = new ReembedPanel(
      (signal, onProgress, onModelLoad) =>
        reembedStore({ engram, target: MINILM, embedderFor: slow, signal, onProgress, onModelLoad }),
      () => undefined,
      (e) => {
        throw e;
      },
    );
    document.body.append(panel.root);
    const run = panel.start({ from: GLOVE.label, to: MINILM.label, count: 50 });
    await expect.poll(() => panel.root.dataset['model'], { timeout: 20_000 }).toBe('10');
    expect(panel.root.querySelector('[data-testid="reembed-rate"]')?.textContent).toContain('loading the model');
    panel.root.querySelector<HTMLButtonElement>('[data-testid="reembed-cancel"]')!.click();
    expect((await run).kind).toBe('cancelled');
    loaded();
    expect((await engram.ready()).embedderId).toBe(GLOVE.id);
  });

  it('a model that fails mid-way ends as failed, with the reason, and the store open with its old model', async () => {
    const { engram } = await storeWith(200);
    const panel = new ReembedPanel(
      (signal, onProgress, onModelLoad) =>
        reembedStore({ engram, target: MINILM, embedderFor: embedderFor(2), signal, onProgress, onModelLoad }),
      () => undefined,
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

describe('ModelPicker and the other long works on the store (StoreWork)', () => {
  it('while a conversion runs the re-embed start is disabled with why and a start is refused; once it ends the re-embed runs and holds the store meanwhile', async () => {
    const { engram } = await storeWith(3);
    const work = new StoreWork();
    const errors: unknown[] = [];
    let ended = 0;
    const picker = new ModelPicker({
      choiceKey: `ui-picker-${Math.random()}`,
      served: [GLOVE, MINILM],
      picked: MINILM,
      embedderFor: embedderFor(),
      selectId: 'model',
      engram: () => engram,
      adopt: () => undefined,
      reembedEnded: () => {
        ended++;
      },
      inUseDetail: () => '',
      showError: (e) => errors.push(e),
      work,
    });
    document.body.append(picker.panel.root);
    await picker.render();
    expect(picker.panel.state).toBe('offer');
    const start = (): HTMLButtonElement => picker.panel.root.querySelector('[data-testid="reembed-start"]')!;
    const note = picker.panel.root.querySelector<HTMLElement>('[data-testid="reembed-blocked"]')!;
    const conversion = 'a conversion of the store’s encryption';
    const release = work.begin(conversion);
    const why = `Busy: ${conversion} is running; ${REEMBED_WORK} can start once it ends.`;
    expect([start().disabled, start().title, note.hidden, note.textContent]).toEqual([true, why, false, why]);
    // A render meanwhile (the page refreshes) keeps it disabled.
    await picker.render();
    expect([start().disabled, start().title]).toEqual([true, why]);
    // A start anyway (programmatic): refused with a clear StoreError, nothing started.
    await expect(picker.panel.start({ from: GLOVE.label, to: MINILM.label, count: 3 })).rejects.toMatchObject({
      code: 'STORE',
      message: why,
    });
    expect([picker.panel.state, picker.running]).toEqual(['offer', false]);

    release();
    expect([start().disabled, start().hasAttribute('title'), note.hidden]).toEqual([false, false, true]);
    start().click();
    expect(work.running).toBe(REEMBED_WORK);
    expect(() => work.begin(conversion)).toThrow(
      `Busy: ${REEMBED_WORK} is running; ${conversion} can start once it ends.`,
    );
    await expect.poll(() => ended, { timeout: 20_000 }).toBe(1);
    expect(work.running).toBeUndefined();
    expect((await engram.ready()).embedderId).toBe(MINILM.id);
    expect(errors).toEqual([]);
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
