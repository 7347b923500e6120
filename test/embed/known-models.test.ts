import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EMBEDDING_MODEL,
  E5_SMALL_EMBEDDING_MODEL,
  KNOWN_EMBEDDING_MODELS,
  MINILM_EMBEDDING_MODEL,
  TransformersEmbedder,
  knownEmbeddingModel,
  pickEmbeddingModel,
} from '../../lib/index.js';

const modelsDir = resolve(import.meta.dirname, '..', '..', 'models');
const onDisk = (id: string): Promise<boolean> => Promise.resolve(existsSync(resolve(modelsDir, id, 'config.json')));

describe('KNOWN_EMBEDDING_MODELS', () => {
  it('lists e5-small first, then MiniLM, before the offline model, which is last, with distinct ids', () => {
    const ids = KNOWN_EMBEDDING_MODELS.map((m) => m.id);
    expect(ids[0]).toBe(E5_SMALL_EMBEDDING_MODEL);
    expect(ids.indexOf(MINILM_EMBEDDING_MODEL)).toBeLessThan(ids.indexOf(DEFAULT_EMBEDDING_MODEL));
    expect(ids.at(-1)).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.isFrozen(KNOWN_EMBEDDING_MODELS)).toBe(true);
  });

  it('gives each present model the id and dimension its embedder reports', async () => {
    const present = KNOWN_EMBEDDING_MODELS.filter((m) => existsSync(resolve(modelsDir, m.id, 'config.json')));
    expect(present.map((m) => m.id)).toContain(DEFAULT_EMBEDDING_MODEL);
    for (const model of present) {
      const embedder = await TransformersEmbedder.create({ model: model.id });
      try {
        expect([embedder.id, embedder.dimensions]).toEqual([model.id, model.dimensions]);
      } finally {
        await embedder.dispose();
      }
    }
  }, 300_000);
});

describe('knownEmbeddingModel()', () => {
  it('finds a listed id and nothing for anything else', () => {
    expect(knownEmbeddingModel(DEFAULT_EMBEDDING_MODEL)?.dimensions).toBe(100);
    for (const bad of ['engram-glove-100d ', '../models', 42, null, undefined, { id: DEFAULT_EMBEDDING_MODEL }])
      expect(knownEmbeddingModel(bad)).toBeUndefined();
  });
});

describe('pickEmbeddingModel()', () => {
  it('picks the first present model, best first, asking about one at a time', async () => {
    const asked: string[] = [];
    const model = await pickEmbeddingModel((id) => {
      asked.push(id);
      return Promise.resolve(id === DEFAULT_EMBEDDING_MODEL);
    });
    expect(model.id).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(asked).toEqual(KNOWN_EMBEDDING_MODELS.map((m) => m.id));
    expect((await pickEmbeddingModel(() => Promise.resolve(true))).id).toBe(KNOWN_EMBEDDING_MODELS[0]!.id);
  });

  it('picks e5-small from this repository models/ folder, where npm run model built it beside MiniLM', async () => {
    expect(existsSync(resolve(modelsDir, MINILM_EMBEDDING_MODEL, 'config.json'))).toBe(true);
    expect(existsSync(resolve(modelsDir, E5_SMALL_EMBEDDING_MODEL, 'config.json'))).toBe(true);
    expect((await pickEmbeddingModel(onDisk)).id).toBe(E5_SMALL_EMBEDDING_MODEL);
  });

  it('takes the preferred model when present, and ignores it when absent or unknown', async () => {
    const all = (): Promise<boolean> => Promise.resolve(true);
    expect((await pickEmbeddingModel(all, DEFAULT_EMBEDDING_MODEL)).id).toBe(DEFAULT_EMBEDDING_MODEL);
    const onlyMinilm = (id: string): Promise<boolean> => Promise.resolve(id === MINILM_EMBEDDING_MODEL);
    expect((await pickEmbeddingModel(onlyMinilm, DEFAULT_EMBEDDING_MODEL)).id).toBe(MINILM_EMBEDDING_MODEL);
    expect((await pickEmbeddingModel(all, 'evil/../../model')).id).toBe(KNOWN_EMBEDDING_MODELS[0]!.id);
  });

  it('counts a presence check that throws as absent, and falls back to the offline model when none is present', async () => {
    const broken = (id: string): Promise<boolean> =>
      id === MINILM_EMBEDDING_MODEL ? Promise.reject(new TypeError('network')) : Promise.resolve(false);
    expect((await pickEmbeddingModel(broken)).id).toBe(DEFAULT_EMBEDDING_MODEL);
  });
});
