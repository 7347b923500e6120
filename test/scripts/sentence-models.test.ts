// The table of sentence models engram-model fetches (scripts/sentence-models.mjs)
// against the list the library and the apps pick from (lib/embed/known-models.ts),
// and the folders the table writes.
import { describe, expect, it } from 'vitest';
import { KNOWN_EMBEDDING_MODELS, retrievalProfile, DEFAULT_RETRIEVAL_PROFILE } from '../../lib/index.js';

/** What the test reads of scripts/sentence-models.mjs (a Node script, typed by its JSDoc, not by this tsconfig). */
interface SentenceModel {
  name: string;
  id: string;
  dimensions: number;
  layers: number;
  maxTokens: number;
  pooling: 'mean' | 'cls';
}
const SCRIPT = new URL('../../scripts/sentence-models.mjs', import.meta.url).href;
const { SENTENCE_MODELS, sentenceModel, writtenFiles } = (await import(/* @vite-ignore */ SCRIPT)) as {
  SENTENCE_MODELS: readonly SentenceModel[];
  sentenceModel: (name: string) => SentenceModel;
  writtenFiles: (model: SentenceModel) => Map<string, string>;
};

describe('sentence models', () => {
  it('the table lists the known models other than glove, in the same order, with the same ids and dimensions', () => {
    const known = KNOWN_EMBEDDING_MODELS.filter((m) => m.name !== 'glove');
    expect(SENTENCE_MODELS.map((m) => [m.name, m.id, m.dimensions])).toEqual(
      known.map((m) => [m.name, m.id, m.dimensions]),
    );
    expect(KNOWN_EMBEDDING_MODELS.at(-1)?.name).toBe('glove');
  });

  it('each model has a retrieval profile, and config.json names its pooling and max length', () => {
    for (const model of SENTENCE_MODELS) {
      expect(retrievalProfile(model.id), model.id).not.toBe(DEFAULT_RETRIEVAL_PROFILE);
      const files = writtenFiles(model);
      const config = JSON.parse(files.get('config.json') ?? '') as Record<string, unknown>;
      const tokenizer = JSON.parse(files.get('tokenizer_config.json') ?? '') as Record<string, unknown>;
      expect(config['num_hidden_layers']).toBe(model.layers);
      expect(config['engram']).toMatchObject({ name: model.id, pooling: model.pooling });
      expect(tokenizer['model_max_length']).toBe(model.maxTokens);
    }
    expect(sentenceModel('bge-small').pooling).toBe('cls');
    expect(() => sentenceModel('gpt')).toThrow(RangeError);
  });
});
