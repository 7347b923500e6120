// Downloads a sentence model's folder (see sentence-models.mjs) from the Hugging
// Face hub, or a mirror with the hub's URL layout:
//
//   <endpoint>/<repo>/resolve/<revision>/<path>
//
// at the pinned revision (`main` for a model whose revision is not pinned: its
// pins are then those of the Maven jar), and checks every file against its
// pinned size and SHA-256. Before each file it asks the endpoint (HEAD, redirects not
// followed) what it declares: the hub answers a large file's resolve URL with a
// redirect carrying `X-Linked-Size` and `X-Linked-Etag` (the file's SHA-256); a
// declaration that disagrees with the pin stops the download before a byte is
// fetched. A mirror that declares nothing is checked against the pins alone.
//
// Nothing half-done is ever in the model folder: files are downloaded into a
// staging folder next to it (`<folder>.download/`), as `<path>.part` while
// incomplete. An interrupted run leaves the staging folder; the next run
// continues each partial file with an HTTP Range request (a server that
// ignores the range sends the whole file, which then replaces the part). When
// every file is verified, the written files are added and the staging folder
// is renamed into place.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { swapIntoPlace } from './model-folder.mjs';
import { pinnedFiles, writtenFiles } from './sentence-models.mjs';

/** The Hugging Face hub; `HF_ENDPOINT` (the variable Hugging Face's own tools read) or `--endpoint` names a mirror. */
export const DEFAULT_ENDPOINT = 'https://huggingface.co';

/** A download that failed in a way worth telling the user plainly (HTTP status, size, digest). */
export class DownloadError extends Error {
  /**
   * @param {string} message
   * @param {{ cause?: unknown, resumable?: boolean }} [options] resumable: a run again continues where this stopped
   */
  constructor(message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DownloadError';
    this.resumable = options.resumable === true;
  }
}

/**
 * @typedef {object} DownloadOptions
 * @property {string} modelsDir the localModelPath folder; the model goes to modelsDir/<model id>, e.g. modelsDir/Xenova/all-MiniLM-L6-v2
 * @property {string} [endpoint] default: HF_ENDPOINT, else https://huggingface.co
 * @property {boolean} [fp32] also the float32 weights (onnx/model.onnx)
 * @property {AbortSignal} [signal]
 * @property {(message: string) => void} [log]
 * @property {typeof fetch} [fetch] default: the global fetch
 */

/**
 * Downloads, verifies and puts the folder in place.
 * @param {import('./sentence-models.mjs').SentenceModel} model
 * @param {DownloadOptions} options
 * @returns {Promise<{ dir: string, bytes: number, resumed: number }>} bytes fetched by this run; resumed: files continued from a part
 */
export async function downloadModel(model, options) {
  const log =
    options.log ??
    ((m) => {
      console.log(m);
    });
  const doFetch = options.fetch ?? globalThis.fetch;
  const endpoint = (options.endpoint ?? process.env['HF_ENDPOINT'] ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(endpoint)) throw new RangeError(`--endpoint must be an http(s) URL, got ${endpoint}`);
  const dir = join(resolve(options.modelsDir), model.id);
  const staging = `${dir}.download`;
  const files = pinnedFiles(model, { fp32: options.fp32 === true });
  const revision = model.hubRevision ?? 'main';
  let bytes = 0;
  let resumed = 0;
  for (const file of files) {
    const url = `${endpoint}/${model.id}/resolve/${revision}/${file.path}`;
    const target = join(staging, file.path);
    if (await isVerified(target, file)) {
      log(`[model] ${file.path}: already downloaded`);
      continue;
    }
    if (await isVerified(join(dir, file.path), file)) {
      // The folder in place has it (e.g. the int8 model, when --fp32 adds the float one).
      await mkdir(dirname(target), { recursive: true });
      await copyFile(join(dir, file.path), target);
      continue;
    }
    await checkDeclared(doFetch, url, file, revision, options.signal);
    const result = await fetchToPart(doFetch, url, `${target}.part`, file, revision, options.signal, log);
    bytes += result.bytes;
    if (result.resumedAt > 0) resumed++;
    const digest = await sha256File(`${target}.part`);
    if (digest !== file.sha256) {
      await rm(`${target}.part`, { force: true });
      throw new DownloadError(`${url}: SHA-256 ${digest}, expected ${file.sha256}; the file was discarded`);
    }
    await rename(`${target}.part`, target);
  }
  for (const [path, text] of writtenFiles(model)) await writeFile(join(staging, path), text);
  await swapIntoPlace(staging, dir);
  log(`[model] ${dir} is complete (${files.map((f) => f.path).join(', ')} verified)`);
  return { dir, bytes, resumed };
}

/**
 * True when `path` is there with the pinned size and digest (a file a previous run finished).
 * @param {string} path
 * @param {import('./sentence-models.mjs').PinnedFile} file
 */
async function isVerified(path, file) {
  const info = await stat(path).catch(() => null);
  if (info === null || info.size !== file.size) return false;
  return (await sha256File(path)) === file.sha256;
}

/**
 * What the endpoint declares for the file, compared with the pin.
 * @param {typeof fetch} doFetch
 * @param {string} url
 * @param {import('./sentence-models.mjs').PinnedFile} file
 * @param {string} revision
 * @param {AbortSignal | undefined} signal
 */
async function checkDeclared(doFetch, url, file, revision, signal) {
  let response;
  try {
    response = await doFetch(url, { method: 'HEAD', redirect: 'manual', ...(signal === undefined ? {} : { signal }) });
  } catch (e) {
    if (signal?.aborted === true) throw e;
    throw new DownloadError(`${url}: ${messageOf(e)}`, { cause: e, resumable: true });
  }
  if (response.status === 404) throw new DownloadError(`${url}: HTTP 404 (not found at revision ${revision})`);
  if (response.status >= 400)
    throw new DownloadError(`${url}: HTTP ${response.status}`, { resumable: response.status >= 500 });
  const size = response.headers.get('x-linked-size');
  if (size !== null && Number(size) !== file.size) {
    throw new DownloadError(
      `${url}: the endpoint declares ${size} bytes, the pinned file has ${file.size}${revision === 'main' ? ' (the repository changed since engram pinned its files)' : ''}`,
    );
  }
  const etag = (response.headers.get('x-linked-etag') ?? response.headers.get('etag') ?? '')
    .replace(/^W\//, '')
    .replaceAll('"', '');
  // A 64-hex ETag is a SHA-256 (the hub's LFS files); anything else (a git blob's SHA-1, a mirror's own tag) says nothing.
  if (/^[0-9a-f]{64}$/.test(etag) && etag !== file.sha256) {
    throw new DownloadError(`${url}: the endpoint declares SHA-256 ${etag}, the pinned file has ${file.sha256}`);
  }
}

/**
 * Appends the file's missing bytes to `part` (all of it when there is no part yet).
 * @param {typeof fetch} doFetch
 * @param {string} url
 * @param {string} part
 * @param {import('./sentence-models.mjs').PinnedFile} file
 * @param {string} revision
 * @param {AbortSignal | undefined} signal
 * @param {(message: string) => void} log
 * @returns {Promise<{ bytes: number, resumedAt: number }>}
 */
async function fetchToPart(doFetch, url, part, file, revision, signal, log) {
  await mkdir(dirname(part), { recursive: true });
  let have = (await stat(part).catch(() => null))?.size ?? 0;
  if (have > file.size) {
    await rm(part, { force: true });
    have = 0;
  }
  if (have === file.size) return { bytes: 0, resumedAt: have };
  /** @type {Record<string, string>} */
  const headers = have > 0 ? { range: `bytes=${have}-` } : {};
  let response;
  try {
    response = await doFetch(url, { headers, redirect: 'follow', ...(signal === undefined ? {} : { signal }) });
  } catch (e) {
    if (signal?.aborted === true) throw e;
    throw new DownloadError(`${url}: ${messageOf(e)}`, { cause: e, resumable: true });
  }
  if (response.status === 404) throw new DownloadError(`${url}: HTTP 404 (not found at revision ${revision})`);
  let start = 0;
  if (response.status === 206) {
    start = Number(/^bytes (\d+)-/.exec(response.headers.get('content-range') ?? '')?.[1] ?? NaN);
    if (start !== have) {
      await response.body?.cancel();
      throw new DownloadError(`${url}: asked for bytes from ${have}, the server sent a range from ${String(start)}`);
    }
  } else if (response.status !== 200) {
    await response.body?.cancel();
    throw new DownloadError(`${url}: HTTP ${response.status}`, {
      resumable: response.status >= 500 || response.status === 416,
    });
  }
  if (response.body === null) throw new DownloadError(`${url}: empty response`, { resumable: true });
  if (have > 0)
    log(
      start > 0
        ? `[model] ${file.path}: resuming at ${start} of ${file.size} bytes`
        : `[model] ${file.path}: the server ignored the range; starting over`,
    );
  else log(`[model] ${file.path}: downloading ${file.size} bytes`);

  const handle = await open(part, start > 0 ? 'a' : 'w');
  let written = start;
  try {
    for await (const chunk of /** @type {AsyncIterable<Uint8Array>} */ (/** @type {unknown} */ (response.body))) {
      if (written + chunk.byteLength > file.size) {
        await handle.close().catch(() => undefined);
        await rm(part, { force: true });
        throw new DownloadError(
          `${url}: the server sent more than the pinned ${file.size} bytes; the file was discarded`,
        );
      }
      await handle.write(chunk);
      written += chunk.byteLength;
    }
  } catch (e) {
    if (e instanceof DownloadError) throw e;
    if (signal?.aborted === true) throw e;
    throw new DownloadError(
      `${url}: the transfer broke off after ${written} of ${file.size} bytes (${messageOf(e)}); run again to resume`,
      {
        cause: e,
        resumable: true,
      },
    );
  } finally {
    await handle.close().catch(() => undefined);
  }
  if (written < file.size) {
    throw new DownloadError(`${url}: the transfer ended after ${written} of ${file.size} bytes; run again to resume`, {
      resumable: true,
    });
  }
  return { bytes: written - start, resumedAt: start };
}

/** @param {string} path */
function sha256File(path) {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => {
        resolvePromise(hash.digest('hex'));
      });
  });
}

/** @param {unknown} e */
function messageOf(e) {
  const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${e instanceof Error ? e.message : String(e)}${cause}`;
}
