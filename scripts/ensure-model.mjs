#!/usr/bin/env node
// Makes sure the offline embedding model folder (engram-glove-100d) is present
// and complete; builds it with build-offline-model.mjs only when a file is
// missing, empty, or was written by an older format version. A complete folder
// costs a few stat() calls and one small JSON read.
//
// In this repository: `npm run model`. In an app that depends on engram, through
// the package's bin link: `npx engram-model`.
//
//   engram-model [--force] [--out DIR]
//
//   --out DIR  the folder that holds model folders (what engram calls
//              `localModelPath`); the model goes to DIR/engram-glove-100d.
//              Default: the package's own models/ folder, where engram looks in Node.
//   --force    rebuild even when the folder is complete.

import { realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOfflineModel, DEFAULT_OUT_DIR, FORMAT_VERSION, MODEL_FILES, MODEL_NAME } from './build-offline-model.mjs';

const USAGE = `usage: engram-model [--force] [--out DIR]
  Builds engram's offline embedding model (${MODEL_NAME}) unless it is already complete.
  --out DIR  write it to DIR/${MODEL_NAME} (DIR is the localModelPath to give engram);
             default: ${DEFAULT_OUT_DIR}, where engram looks in Node
  --force    rebuild even when the folder is complete`;

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
    const config = /** @type {{ engram?: { formatVersion?: unknown } }} */ (JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')));
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
 * The command line, parsed.
 * @param {readonly string[]} argv the arguments after the script
 * @returns {{ help: true } | { help: false, force: boolean, dir: string }}
 */
export function parseArgs(argv) {
  let force = false;
  let dir = DEFAULT_OUT_DIR;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return { help: true };
    if (arg === '--force') {
      force = true;
    } else if (arg === '--out' || arg?.startsWith('--out=') === true) {
      const value = arg === '--out' ? argv[++i] : arg.slice('--out='.length);
      if (value === undefined || value === '' || value.startsWith('--')) throw new RangeError(`--out needs a folder\n${USAGE}`);
      dir = join(resolve(value), MODEL_NAME);
    } else {
      throw new RangeError(`unknown argument ${String(arg)}\n${USAGE}`);
    }
  }
  return { help: false, force, dir };
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
    if (args.help) {
      console.log(USAGE);
    } else {
      const { dir, built } = await ensureModel({ dir: args.dir, force: args.force });
      // A build logs `[model] wrote <dir> …` itself.
      if (!built) console.log(`[model] ${dir} is complete (--force rebuilds it)`);
      if (args.dir !== DEFAULT_OUT_DIR) {
        const parent = resolve(dir, '..');
        console.log(`[model] give engram localModelPath: in Node the folder ${parent}, in a browser the URL path the page serves it at (default '/models/')`);
      }
    }
  } catch (e) {
    if (e instanceof RangeError) console.error(`[model] ${e.message}`);
    else console.error('[model] could not build the offline model:', e);
    process.exitCode = 1;
  }
}
