// Writing a model folder so that no reader ever sees half of one: the files go
// into a temporary sibling folder, which is then renamed into place. Used by
// every script that makes a model folder (build-offline-model.mjs,
// build-maven-model.mjs, download-model.mjs).

import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * @param {unknown} e
 * @param {string} code
 * @returns {boolean} true when `e` is a Node system error with that `code`
 */
export function isErrno(e, code) {
  return typeof e === 'object' && e !== null && /** @type {{ code?: unknown }} */ (e).code === code;
}

/**
 * A fresh, empty temporary folder next to `outDir` (same file system, so the
 * final rename is atomic).
 * @param {string} outDir the folder that will be replaced
 * @returns {Promise<string>}
 */
export async function makeTempSibling(outDir) {
  const tmpDir = `${outDir}.tmp-${process.pid}-${Date.now()}`;
  await rm(tmpDir, { recursive: true, force: true });
  await mkdir(tmpDir, { recursive: true });
  return tmpDir;
}

/**
 * Moves the finished `tmpDir` to `outDir`, replacing any folder there. The old
 * folder is moved aside first (rename() cannot replace a non-empty directory)
 * and deleted only after the new one is in place.
 * @param {string} tmpDir a complete folder, made by {@link makeTempSibling}
 * @param {string} outDir
 */
export async function swapIntoPlace(tmpDir, outDir) {
  await mkdir(dirname(outDir), { recursive: true });
  const oldDir = `${outDir}.old-${process.pid}-${Date.now()}`;
  await rename(outDir, oldDir).catch(
    /** @param {unknown} e */ (e) => {
      if (!isErrno(e, 'ENOENT')) throw e;
    },
  );
  try {
    await rename(tmpDir, outDir);
  } catch (e) {
    // Put the old folder back rather than leave nothing.
    await rename(oldDir, outDir).catch(() => undefined);
    throw e;
  }
  await rm(oldDir, { recursive: true, force: true });
}

/**
 * Runs `fill(tmpDir)` in a temporary folder and swaps the result into
 * `outDir`; on any failure the temporary folder is removed and `outDir` is
 * left as it was.
 * @template T
 * @param {string} outDir
 * @param {(tmpDir: string) => Promise<T>} fill
 * @returns {Promise<T>}
 */
export async function writeFolderAtomically(outDir, fill) {
  const tmpDir = await makeTempSibling(outDir);
  try {
    const result = await fill(tmpDir);
    await swapIntoPlace(tmpDir, outDir);
    return result;
  } catch (e) {
    await rm(tmpDir, { recursive: true, force: true });
    throw e;
  }
}
