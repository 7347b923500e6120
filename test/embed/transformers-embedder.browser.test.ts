// Real Chromium: the embedder runs transformers.js in a Web Worker on ONNX
// Runtime Web, whose files and the offline model (built by
// `node scripts/ensure-model.mjs`) are served by Vite from this repository.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, ClosedError, ModelLoadError } from '../../lib/errors.js';
import { TransformersEmbedder } from '../../lib/embed/transformers-embedder.js';
import { PARAPHRASES, cosine } from './paraphrases.js';
import { referenceEmbed } from './glove-reference.js';

const MODEL_URL = '/models/engram-glove-100d/';

async function fetchOk(url: string): Promise<Response> {
  const response = await fetch(url);
  if (!response.ok) throw new TypeError(`${url}: HTTP ${response.status}`);
  return response;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

describe('TransformersEmbedder (browser worker, offline model)', () => {
  let embedder: TransformersEmbedder;
  let tokenizer: unknown;
  let onnx: Uint8Array;

  beforeAll(async () => {
    embedder = await TransformersEmbedder.create({ localModelPath: '/models/' });
    tokenizer = await (await fetchOk(`${MODEL_URL}tokenizer.json`)).json();
    onnx = new Uint8Array(await (await fetchOk(`${MODEL_URL}onnx/model.onnx`)).arrayBuffer());
  });

  afterAll(async () => {
    await embedder.dispose();
  });

  it('create() loads the offline model from /models/ in a Web Worker', () => {
    expect(embedder.id).toBe('engram-glove-100d');
    expect(embedder.dimensions).toBe(100);
    expect(embedder.inWorker).toBe(true);
  });

  it('embed() matches a direct lookup in the model table within 1e-4', async () => {
    const texts = [...PARAPHRASES.flat(), '', 'Unknown zzqxv words, mostly!', 'Numbers like 1990 and 42 count too.'];
    const got = await embedder.embed(texts);
    const expected = referenceEmbed(tokenizer, onnx, texts);
    expect(got).toHaveLength(texts.length);
    for (let i = 0; i < texts.length; i++) {
      expect(got[i]).toHaveLength(100);
      for (let d = 0; d < 100; d++) expect(Math.abs(got[i]![d]! - expected[i]![d]!), texts[i]).toBeLessThan(1e-4);
    }
  });

  it('embed() scores paraphrases clearly above unrelated sentences', async () => {
    const a = await embedder.embed(PARAPHRASES.map((p) => p[0]));
    const b = await embedder.embed(PARAPHRASES.map((p) => p[1]));
    const own = a.map((v, i) => cosine(v, b[i]!));
    const others = a.flatMap((v, i) => b.flatMap((w, j) => (i === j ? [] : [cosine(v, w)])));
    expect(mean(own) - mean(others)).toBeGreaterThan(0.4);
  });

  it('embed() gives the same vectors in the worker as in the page', async () => {
    const inPage = await TransformersEmbedder.create({ localModelPath: '/models/', worker: false });
    try {
      expect(inPage.inWorker).toBe(false);
      const texts = PARAPHRASES.flat();
      const a = await embedder.embed(texts);
      const b = await inPage.embed(texts);
      for (let i = 0; i < texts.length; i++)
        for (let d = 0; d < 100; d++) expect(Math.abs(a[i]![d]! - b[i]![d]!)).toBeLessThan(1e-6);
    } finally {
      await inPage.dispose();
    }
  });

  it('embed() rejects with AbortError when aborted mid-way, and the worker keeps working', async () => {
    const texts = Array.from({ length: 2000 }, (_, i) => `note ${i} about the garden`);
    const controller = new AbortController();
    const pending = embedder.embed(texts, { signal: controller.signal });
    setTimeout(() => {
      controller.abort();
    }, 0);
    await expect(pending).rejects.toThrow(AbortError);
    const [v] = await embedder.embed(['still here']);
    expect(v).toHaveLength(100);
  });

  it('create() rejects with ModelLoadError when the model is not served', async () => {
    await expect(TransformersEmbedder.create({ model: 'no-such-model', localModelPath: '/models/' })).rejects.toThrow(
      ModelLoadError,
    );
  });

  it('dispose() terminates the worker; later embed() calls reject with ClosedError', async () => {
    const temp = await TransformersEmbedder.create({ localModelPath: '/models/' });
    await temp.dispose();
    await expect(temp.embed(['x'])).rejects.toThrow(ClosedError);
  });
});
