#!/usr/bin/env node
// Makes sure the offline embedding model folder (models/engram-glove-100d) is
// present and complete; builds it with build-offline-model.mjs only when a file
// is missing, empty, or was written by an older format version. A complete
// folder costs a few stat() calls and one small JSON read.
//
//   node scripts/ensure-model.mjs [--force]

import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildOfflineModel, DEFAULT_OUT_DIR, FORMAT_VERSION, MODEL_FILES } from './build-offline-model.mjs';

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
 * Builds the model when needed.
 * @param {{ dir?: string, force?: boolean }} [options]
 * @returns {Promise<boolean>} true when a build ran
 */
export async function ensureModel(options = {}) {
  const dir = resolve(options.dir ?? DEFAULT_OUT_DIR);
  const problem = options.force === true ? 'rebuild forced' : await modelProblem(dir);
  if (problem === null) return false;
  console.log(`[model] building ${dir}: ${problem}`);
  await buildOfflineModel({ outDir: dir });
  return true;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    await ensureModel({ force: process.argv.includes('--force') });
  } catch (e) {
    console.error('[model] could not build the offline model:', e);
    process.exitCode = 1;
  }
}
